-- SPDX-License-Identifier: Apache-2.0
-- prelude.after_eof.trace_diagnostics: Perfetto's table of advice on the
-- trace itself (its trace checks), with its columns and declared types,
-- empty: we run no such checks. A branch that fills it drops this file.

-- What Perfetto's trace checks found wrong with the trace.
CREATE TABLE __intrinsic_trace_diagnostics(
  id INTEGER PRIMARY KEY,
  key TEXT,
  title TEXT,
  description TEXT,
  remediation TEXT,
  confidence DOUBLE,
  trace_id INTEGER
);
