-- SPDX-License-Identifier: Apache-2.0
-- android.startup.startup_events: system_server's 'launching: <package>'
-- slices, one per app launch.

INCLUDE PERFETTO MODULE slices.with_context;

-- Every launching slice of system_server (or of no known process), with
-- its end and the package launched.
CREATE PERFETTO TABLE _startup_events AS
SELECT s.ts, s.dur, s.ts + s.dur AS ts_end, str_split(s.name, ': ', 1) AS package_name
FROM process_slice AS s
WHERE s.name GLOB 'launching: *'
  AND (s.process_name IS NULL OR s.process_name = 'system_server');
