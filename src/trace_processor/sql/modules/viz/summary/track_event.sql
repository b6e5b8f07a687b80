-- SPDX-License-Identifier: Apache-2.0
-- viz.summary.track_event: the track event tracks as the UI lays them
-- out: each track's place among its siblings (by the parent's
-- child_ordering: lexicographic by name, explicit by the children's
-- sibling_order_rank, or chronological by first event), tracks merged
-- into one group shown as one row.

INCLUDE PERFETTO MODULE viz.track_event_callstacks;

-- Every track event track with its parent's ordering and its own rank.
CREATE PERFETTO TABLE _track_event_tracks_unordered AS
WITH te AS (
  SELECT
    t.id,
    t.name,
    t.parent_id,
    extract_arg(t.source_arg_set_id, 'child_ordering') AS ordering,
    extract_arg(t.source_arg_set_id, 'sibling_order_rank') AS rank,
    extract_arg(t.source_arg_set_id, 'description') AS description
  FROM track AS t
  WHERE t.type GLOB '*_track_event'
)
SELECT
  c.id,
  c.name,
  c.parent_id,
  par.ordering AS parent_ordering,
  coalesce(c.rank, 0) AS rank,
  c.description
FROM te AS c
LEFT JOIN te AS par ON par.id = c.parent_id;

-- First event time of each track event track that has events (counter
-- values, slices or states).
CREATE PERFETTO TABLE _min_ts_per_track AS
SELECT v.track_id AS id, min(v.ts) AS min_ts
FROM counter AS v
JOIN _track_event_tracks_unordered AS u ON u.id = v.track_id
GROUP BY v.track_id
UNION ALL
SELECT s.track_id AS id, min(s.ts) AS min_ts
FROM slice AS s
JOIN _track_event_tracks_unordered AS u ON u.id = s.track_id
GROUP BY s.track_id
UNION ALL
SELECT st.track_id AS id, min(st.ts) AS min_ts
FROM state AS st
JOIN _track_event_tracks_unordered AS u ON u.id = st.track_id
GROUP BY st.track_id;

-- The track event tracks that are some track event track's parent.
CREATE PERFETTO TABLE _track_event_has_children AS
SELECT DISTINCT t.parent_id AS id
FROM track AS t
WHERE t.type GLOB '*_track_event' AND t.parent_id IS NOT NULL;

-- One row per shown track (a merged group or a lone track): where it
-- belongs, what it holds, and its rank among its siblings.
CREATE PERFETTO TABLE _track_event_tracks_ordered_groups AS
WITH ranked AS (
  SELECT
    u.id,
    row_number() OVER (PARTITION BY u.parent_id ORDER BY u.name) AS order_id
  FROM _track_event_tracks_unordered AS u
  WHERE u.parent_ordering IS NULL OR u.parent_ordering = 'lexicographic'
  UNION ALL
  SELECT
    u.id,
    row_number() OVER (PARTITION BY u.parent_id ORDER BY u.rank) AS order_id
  FROM _track_event_tracks_unordered AS u
  WHERE u.parent_ordering = 'explicit'
  UNION ALL
  SELECT
    u.id,
    row_number() OVER (PARTITION BY u.parent_id ORDER BY m.min_ts) AS order_id
  FROM _track_event_tracks_unordered AS u
  LEFT JOIN _min_ts_per_track AS m ON m.id = u.id
  WHERE u.parent_ordering = 'chronological'
)
SELECT
  extract_arg(t.dimension_arg_set_id, 'upid') AS upid,
  extract_arg(t.dimension_arg_set_id, 'utid') AS utid,
  t.parent_id,
  t.type GLOB '*counter*' AS is_counter,
  t.type GLOB '*state*' AS is_state,
  t.name,
  min(extract_arg(t.source_arg_set_id, 'description')) AS description,
  min(ct.unit) AS unit,
  min(extract_arg(t.source_arg_set_id, 'builtin_counter_type')) AS builtin_counter_type,
  min(extract_arg(t.source_arg_set_id, 'y_axis_share_key')) AS y_axis_share_key,
  max(m.id IS NOT NULL) AS has_data,
  max(ch.id IS NOT NULL) AS has_children,
  max(cs.track_id IS NOT NULL) AS has_callstacks,
  min(r.id) AS min_track_id,
  group_concat(r.id) AS track_ids,
  min(r.order_id) AS order_id
FROM ranked AS r
JOIN track AS t ON t.id = r.id
LEFT JOIN counter_track AS ct ON ct.id = r.id
LEFT JOIN _track_event_has_children AS ch ON ch.id = r.id
LEFT JOIN _min_ts_per_track AS m ON m.id = r.id
LEFT JOIN _track_event_tracks_with_callstacks AS cs ON cs.track_id = r.id
GROUP BY t.track_group_id, coalesce(t.track_group_id, t.id)
ORDER BY t.parent_id, r.order_id;
