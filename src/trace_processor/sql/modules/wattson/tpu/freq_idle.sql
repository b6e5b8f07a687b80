-- SPDX-License-Identifier: Apache-2.0
-- wattson.tpu.freq_idle: the TPU's frequency (its DVFS slices) and the
-- number of requests it serves over time, for Wattson's TPU estimate.

-- The TPU's frequency over the whole trace: its DVFS slices (cluster 0,
-- 1 or both (2) from the name), frequency 0 in cluster 0 between them and
-- before the first.
CREATE PERFETTO TABLE _tpu_freq AS
WITH
  dvfs AS (
    SELECT
      s.ts,
      iif(s.dur = -1, trace_end() - s.ts, s.dur) AS dur,
      CAST(s.name AS INT) AS freq,
      CASE
        WHEN s.name GLOB '*Cluster Both*' THEN 2
        WHEN s.name GLOB '*Cluster 0*' THEN 0
        WHEN s.name GLOB '*Cluster 1*' THEN 1
        ELSE 2
      END AS cluster
    FROM slice AS s
    JOIN track AS t ON t.id = s.track_id
    WHERE t.name = 'DVFS'
  ),
  filled AS (
    SELECT trace_start() AS ts, min(d.ts) - trace_start() AS dur, 0 AS freq, 0 AS cluster
    FROM dvfs AS d
    UNION ALL
    SELECT d.ts, d.dur, d.freq, d.cluster FROM dvfs AS d
    UNION ALL
    SELECT
      d.ts + d.dur AS ts,
      lead(d.ts, 1, trace_end()) OVER (ORDER BY d.ts) - (d.ts + d.dur) AS dur,
      0 AS freq,
      0 AS cluster
    FROM dvfs AS d
  )
SELECT * FROM filled WHERE dur > 0 ORDER BY ts;

-- How many TPU requests are open over time (0 to 16), from the 'TPU
-- Requests' slices.
CREATE PERFETTO TABLE _tpu_requests_count AS
WITH
  steps AS (
    SELECT trace_start() AS ts, 0 AS delta
    UNION ALL
    SELECT s.ts, 1 AS delta
    FROM slice AS s
    JOIN track AS t ON t.id = s.track_id
    WHERE t.name = 'TPU Requests'
    UNION ALL
    SELECT s.ts + s.dur AS ts, -1 AS delta
    FROM slice AS s
    JOIN track AS t ON t.id = s.track_id
    WHERE t.name = 'TPU Requests'
  ),
  running AS (
    SELECT st.ts, sum(st.delta) OVER (ORDER BY st.ts) AS raw_count FROM steps AS st
  ),
  per_ts AS (
    SELECT r.ts, max(r.raw_count) AS raw_count FROM running AS r GROUP BY r.ts
  ),
  counted AS (
    SELECT
      p.ts,
      lead(p.ts, 1, trace_end()) OVER (ORDER BY p.ts) - p.ts AS dur,
      max(0, min(16, p.raw_count)) AS requests
    FROM per_ts AS p
  )
SELECT * FROM counted WHERE dur > 0;
