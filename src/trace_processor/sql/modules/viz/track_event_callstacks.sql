-- SPDX-License-Identifier: Apache-2.0
-- viz.track_event_callstacks: the tracks whose track events carry
-- callstacks (the UI offers callstack tabs for them).

CREATE PERFETTO TABLE _track_event_tracks_with_callstacks AS
SELECT DISTINCT c.track_id
FROM __intrinsic_track_event_callstacks AS c;
