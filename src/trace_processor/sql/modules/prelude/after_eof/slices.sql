-- SPDX-License-Identifier: Apache-2.0
-- prelude.after_eof.slices: functions over the slice table that Perfetto
-- has before any INCLUDE.

-- Whether slice $ancestor_id encloses slice $descendant_id on the same
-- track at a lower depth (a slice that never ended encloses all that
-- starts after it). NULL when either slice does not exist.
CREATE PERFETTO FUNCTION slice_is_ancestor(
  -- The possible ancestor.
  ancestor_id LONG,
  -- The possible descendant.
  descendant_id LONG
)
RETURNS BOOL AS
SELECT
  a.track_id = d.track_id
  AND a.depth < d.depth
  AND a.ts <= d.ts
  AND (a.dur = -1 OR a.ts + a.dur >= d.ts + d.dur)
FROM slice AS a
JOIN slice AS d ON d.id = $descendant_id
WHERE a.id = $ancestor_id;
