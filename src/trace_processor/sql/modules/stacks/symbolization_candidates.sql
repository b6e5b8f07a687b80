-- SPDX-License-Identifier: Apache-2.0
-- stacks.symbolization_candidates: the (process, module, rel_pc) of every
-- frame of a CPU profiling callstack that has no symbols yet and whose
-- module has a build id: what a symbolizer should be asked about. For
-- Chrome's own libraries the Breakpad module id is derived from the build
-- id (its first 16 bytes' three fields byte-swapped, then '0').
-- The callstacks of heapprofd allocations are walked too.

INCLUDE PERFETTO MODULE stacks.cpu_profiling;

CREATE PERFETTO TABLE _stacks_symbolization_candidates AS
WITH RECURSIVE
  sampled AS (
    SELECT DISTINCT t.upid, s.callsite_id
    FROM cpu_profiling_samples AS s
    JOIN thread AS t USING (utid)
    UNION
    SELECT DISTINCT a.upid, a.callsite_id
    FROM heap_profile_allocation AS a
  ),
  walk(upid, callsite_id) AS (
    SELECT upid, callsite_id FROM sampled
    UNION
    SELECT w.upid, c.parent_id
    FROM walk AS w
    JOIN stack_profile_callsite AS c ON c.id = w.callsite_id
    WHERE c.parent_id IS NOT NULL
  ),
  unsymbolized AS (
    SELECT DISTINCT w.upid, f.mapping AS mapping_id, f.rel_pc
    FROM walk AS w
    JOIN stack_profile_callsite AS c ON c.id = w.callsite_id
    JOIN stack_profile_frame AS f ON f.id = c.frame_id
    WHERE f.symbol_set_id IS NULL
  ),
  candidates AS (
    SELECT u.upid, m.name AS module, m.build_id, u.rel_pc
    FROM unsymbolized AS u
    JOIN stack_profile_mapping AS m ON m.id = u.mapping_id
    WHERE m.build_id != ''
  )
SELECT
  upid,
  module,
  build_id,
  rel_pc,
  CASE
    WHEN (module GLOB '*libmonochrome_64.so' OR module GLOB '*libchrome.so'
          OR module GLOB '*libmonochrome.so' OR module GLOB '*libwebviewchromium.so'
          OR module GLOB '*libchromium_android_linker.so')
         AND length(build_id) >= 40
    THEN substr(build_id, 7, 2) || substr(build_id, 5, 2) || substr(build_id, 3, 2)
         || substr(build_id, 1, 2) || substr(build_id, 11, 2) || substr(build_id, 9, 2)
         || substr(build_id, 15, 2) || substr(build_id, 13, 2) || substr(build_id, 17, 16)
         || '0'
  END AS breakpad_module_id
FROM candidates;
