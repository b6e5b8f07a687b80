-- SPDX-License-Identifier: Apache-2.0
-- slices.self_dur: the time each slice spent in itself rather than in
-- its children.

-- The children's durations of each slice that has children, added up.
CREATE PERFETTO TABLE _slice_children_dur AS
SELECT s.parent_id AS id, sum(s.dur) AS child_dur_sum
FROM slice AS s
WHERE s.parent_id IS NOT NULL
GROUP BY s.parent_id
ORDER BY s.parent_id;

-- Every slice with its self duration: its duration less its children's.
CREATE PERFETTO TABLE slice_self_dur(
  -- The slice.
  id ID(slice.id),
  -- Its duration less the durations of its direct children.
  self_dur DURATION
)
AS
SELECT s.id, s.dur - coalesce(c.child_dur_sum, 0) AS self_dur
FROM slice AS s
LEFT JOIN _slice_children_dur AS c ON c.id = s.id
ORDER BY s.id;
