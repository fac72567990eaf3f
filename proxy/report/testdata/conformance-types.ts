// The ConformanceCheck type of the MCP conformance suite, as published in
// @modelcontextprotocol/conformance 0.1.16 (src/types.ts, MIT licence,
// https://github.com/modelcontextprotocol/conformance). TestChecksJSONSchema
// reads the fields and statuses of checks.json from it; the rest of the file
// is left out.

export type CheckStatus =
  | 'SUCCESS'
  | 'FAILURE'
  | 'WARNING'
  | 'SKIPPED'
  | 'INFO';

export interface SpecReference {
  id: string;
  url?: string;
}

export interface ConformanceCheck {
  id: string;
  name: string;
  description: string;
  status: CheckStatus;
  timestamp: string;
  specReferences?: SpecReference[];
  details?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  errorMessage?: string;
  logs?: string[];
}
