-- SPDX-License-Identifier: Apache-2.0
-- android.cpu.cpu_per_uid: CPU time per app uid and CPU cluster, from the
-- kernel's per-uid CPU time counters that Android's probes poll.

INCLUDE PERFETTO MODULE counters.intervals;

-- One track per (uid, cluster).
CREATE PERFETTO TABLE android_cpu_per_uid_track(
  -- The track; join with android_cpu_per_uid_counter.track_id.
  id LONG,
  -- The uid.
  uid LONG,
  -- The CPU cluster, from 0 (higher numbers are usually bigger cores).
  cluster LONG,
  -- CPU milliseconds the uid used on the cluster over the trace.
  total_cpu_millis LONG,
  -- A package of the uid (any one where it has several); NULL below
  -- uid 10000.
  package_name STRING
)
AS
SELECT
  t.track_id AS id,
  t.uid,
  t.cluster,
  t.total_cpu_millis,
  (
    SELECT pl.package_name
    FROM package_list AS pl
    WHERE pl.uid = t.uid % 100000 AND pl.uid >= 10000
    LIMIT 1
  ) AS package_name
FROM __intrinsic_android_cpu_per_uid_track AS t;

-- Per track, each poll with the time to the next one and the CPU time
-- used in between.
CREATE PERFETTO VIEW android_cpu_per_uid_counter(
  -- The counter row.
  id LONG,
  -- The poll's time.
  ts LONG,
  -- Time to the track's next poll.
  dur LONG,
  -- The track.
  track_id LONG,
  -- CPU milliseconds used until the next poll.
  diff_ms LONG,
  -- The same as a share of one core (1.0: one core busy all the time).
  cpu_ratio DOUBLE
)
AS
WITH iv AS (
  SELECT *
  FROM counter_leading_intervals!((
    SELECT c.id, c.ts, c.track_id, c.value
    FROM counter AS c
    JOIN android_cpu_per_uid_track AS t ON t.id = c.track_id
  ))
)
SELECT
  iv.id,
  iv.ts,
  iv.dur,
  iv.track_id,
  iv.next_value - iv.value AS diff_ms,
  (iv.next_value - iv.value) * 1e6 / iv.dur AS cpu_ratio
FROM iv
WHERE iv.next_value IS NOT NULL;
