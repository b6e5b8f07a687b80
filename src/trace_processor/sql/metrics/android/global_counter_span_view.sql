-- SPDX-License-Identifier: Apache-2.0
-- android/global_counter_span_view.sql: the view {{table_name}}_span, the
-- values of the global counter (a counter track with no dimension but its
-- name) named '{{counter_name}}' as spans: each value lasts until the
-- next one on its track, the last until the end of the trace. Arguments:
-- table_name (the view's prefix, and of its value column
-- {{table_name}}_val) and counter_name.

INCLUDE PERFETTO MODULE counters.global_tracks;

DROP VIEW IF EXISTS {{table_name}}_span;
CREATE PERFETTO VIEW {{table_name}}_span AS
SELECT
  c.ts,
  coalesce(
    lead(c.ts) OVER (PARTITION BY c.track_id ORDER BY c.ts),
    trace_end()
  ) - c.ts AS dur,
  c.value AS {{table_name}}_val
FROM counter AS c
JOIN counter_track AS t ON t.id = c.track_id
WHERE t.name = '{{counter_name}}'
  AND _counter_track_is_only_name_dimension(t.id);
