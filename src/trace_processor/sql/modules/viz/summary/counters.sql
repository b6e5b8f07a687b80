-- SPDX-License-Identifier: Apache-2.0
-- viz.summary.counters: the counter tracks that have at least one value.

CREATE PERFETTO TABLE _counter_track_summary AS
SELECT DISTINCT c.track_id AS id
FROM counter AS c;
