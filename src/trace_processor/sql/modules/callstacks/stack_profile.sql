-- SPDX-License-Identifier: Apache-2.0
-- callstacks.stack_profile: the callstack forest the summary trees of
-- linux.perf.samples and stacks.cpu_profiling are cut from. One node per
-- stack_profile_callsite (we import no symbol tables, so a frame is never
-- split into inlined functions), numbered as Perfetto numbers its nodes:
-- by callsite, so a node's id and parent_id are its callsite's.
-- A frame's name is its deobfuscated name, else its own, demangled if it
-- is a mangled C++ name; 'unknown' if it has neither.

CREATE TABLE _callstack_spc_forest AS
SELECT
  c.id AS id,
  c.parent_id AS parent_id,
  coalesce(demangle(coalesce(f.deobfuscated_name, f.name)), f.deobfuscated_name, f.name,
           'unknown') AS name,
  f.mapping AS mapping_id,
  NULL AS source_file,
  NULL AS line_number,
  0 AS column_number,
  NULL AS inlined,
  c.id AS callsite_id,
  1 AS is_leaf_function_in_callsite_frame
FROM stack_profile_callsite AS c
JOIN stack_profile_frame AS f ON f.id = c.frame_id
ORDER BY c.id;

CREATE INDEX _callstack_spc_forest_callsite ON _callstack_spc_forest(callsite_id);
CREATE INDEX _callstack_spc_forest_parent ON _callstack_spc_forest(parent_id);
