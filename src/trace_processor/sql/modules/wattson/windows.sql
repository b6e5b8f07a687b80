-- SPDX-License-Identifier: Apache-2.0
-- wattson.windows: the time windows Wattson reports power over: the
-- user's markers, the whole trace, each app startup, each jank CUJ.

INCLUDE PERFETTO MODULE android.cujs.base;
INCLUDE PERFETTO MODULE android.startup.startups;
INCLUDE PERFETTO MODULE wattson.utils;

-- The window between the wattson_start and wattson_stop markers.
CREATE PERFETTO VIEW wattson_window_markers(
  -- Its start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- Always 1.
  period_id LONG
)
AS
SELECT w.ts, w.dur, 1 AS period_id FROM _wattson_markers_window AS w;

-- The whole trace as one window.
CREATE PERFETTO VIEW wattson_window_trace(
  -- The trace's start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- Always 1.
  period_id LONG
)
AS
SELECT trace_start() AS ts, trace_dur() AS dur, 1 AS period_id;

-- Each app startup as a window.
CREATE PERFETTO VIEW wattson_window_app_startup(
  -- The startup's start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- The startup's id.
  period_id LONG
)
AS
SELECT s.ts, s.dur, s.startup_id AS period_id FROM android_startups AS s;

-- Each jank CUJ as a window.
CREATE PERFETTO VIEW wattson_window_atrace_apps(
  -- The CUJ's start.
  ts TIMESTAMP,
  -- Its duration.
  dur DURATION,
  -- The CUJ's id.
  period_id LONG
)
AS
SELECT c.ts, c.dur, c.cuj_id AS period_id FROM android_jank_cuj AS c;
