// Package docs holds fray's reference documentation, as Markdown. Its
// tests hold the documents to the code: the layout to the tree, the
// tables to the catalogs they describe.
package docs
