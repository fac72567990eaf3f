# bash completion for fray: source it, or copy it to
# /etc/bash_completion.d/fray. fray lists the words itself
# (fray ... --generate-bash-completion).
_fray() {
	local cur="${COMP_WORDS[COMP_CWORD]}" words
	if [[ "$cur" == -* ]]; then
		words=$("${COMP_WORDS[@]:0:COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
	else
		words=$("${COMP_WORDS[@]:0:COMP_CWORD}" --generate-bash-completion 2>/dev/null)
	fi
	mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}
complete -o default -F _fray fray
