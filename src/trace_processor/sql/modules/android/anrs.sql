-- SPDX-License-Identifier: Apache-2.0
-- android.anrs: the ANRs (Application Not Responding) system_server
-- reported in the trace, from its ErrorId and Subject counters and the
-- ANR timer's expired(...) slices: who, when, what kind, and the timeout.

-- The kind of ANR its subject line tells (BROADCAST_OF_INTENT,
-- INPUT_DISPATCHING_TIMEOUT, EXECUTING_SERVICE, ...); an unknown subject
-- of system_server is a watchdog timeout, any other UNKNOWN_ANR_TYPE.
CREATE PERFETTO FUNCTION _extract_anr_type(subject STRING, process_name STRING)
RETURNS STRING
AS
SELECT
  CASE
    WHEN $subject IS NULL THEN NULL
    WHEN $subject GLOB 'Broadcast of*' THEN 'BROADCAST_OF_INTENT'
    WHEN $subject GLOB 'Input dispatching timed out*does not have a focused window*'
      OR $subject GLOB 'Input dispatching timed out*Waiting because no window has focus but there is a focused application*'
      THEN 'INPUT_DISPATCHING_TIMEOUT_NO_FOCUSED_WINDOW'
    WHEN $subject GLOB 'Input dispatching timed out*' THEN 'INPUT_DISPATCHING_TIMEOUT'
    WHEN $subject GLOB 'Context.startForegroundService() did not then call Service.startForeground()*'
      THEN 'START_FOREGROUND_SERVICE'
    WHEN $subject GLOB 'executing service*' THEN 'EXECUTING_SERVICE'
    WHEN $subject GLOB 'ContentProvider not responding*' THEN 'CONTENT_PROVIDER_NOT_RESPONDING'
    WHEN $subject = 'App requested: Buffer processing hung up due to stuck fence. Indicates GPU hang'
      THEN 'GPU_HANG'
    WHEN $subject GLOB 'No response to onStartJob*' THEN 'JOB_SERVICE_START'
    WHEN $subject GLOB 'No response to onStopJob*' THEN 'JOB_SERVICE_STOP'
    WHEN $subject GLOB 'Timed out while trying to bind*' THEN 'JOB_SERVICE_BIND'
    WHEN $subject GLOB 'Process ProcessRecord{*} failed to complete startup' THEN 'BIND_APPLICATION'
    WHEN $subject GLOB 'A foreground service of FOREGROUND_SERVICE_TYPE_SHORT_SERVICE did not stop within a timeout*'
      THEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT'
    WHEN $subject GLOB 'A foreground service of type*' THEN 'FOREGROUND_SERVICE_TIMEOUT'
    WHEN $subject GLOB 'App requested: *' THEN 'APP_TRIGGERED'
    WHEN $subject GLOB 'required notification not provided*'
      THEN 'JOB_SERVICE_NOTIFICATION_NOT_PROVIDED'
    WHEN $process_name = 'system_server' THEN 'SYSTEM_SERVER_WATCHDOG_TIMEOUT'
    ELSE 'UNKNOWN_ANR_TYPE'
  END;

-- The intent flags (flg=0x...) of a broadcast ANR's subject, or NULL.
CREATE PERFETTO FUNCTION _get_broadcast_flag(subject STRING)
RETURNS LONG
AS
SELECT
  iif(
    $subject GLOB 'Broadcast of Intent *flg=*',
    unhex(str_split(substr($subject, instr($subject, ' flg=') + 5), ' ', 0)),
    NULL
  ) AS flag;

-- The usual timeout, in ms, of an ANR type on AOSP and Pixel (other
-- vendors may differ): a broadcast's depends on its foreground flag
-- (0x10000000): 10 s with it (or no flags), 60 s without.
CREATE PERFETTO FUNCTION _default_anr_dur(anr_type STRING, subject STRING)
RETURNS LONG
AS
SELECT
  CASE $anr_type
    WHEN 'BROADCAST_OF_INTENT' THEN
      iif(
        _get_broadcast_flag($subject) IS NULL
          OR (_get_broadcast_flag($subject) & 268435456) != 0,
        10000,
        60000
      )
    WHEN 'INPUT_DISPATCHING_TIMEOUT' THEN 5000
    WHEN 'INPUT_DISPATCHING_TIMEOUT_NO_FOCUSED_WINDOW' THEN 5000
    WHEN 'START_FOREGROUND_SERVICE' THEN 30000
    WHEN 'EXECUTING_SERVICE' THEN 20000
    WHEN 'JOB_SERVICE_START' THEN 8000
    WHEN 'JOB_SERVICE_STOP' THEN 8000
    WHEN 'JOB_SERVICE_BIND' THEN 8000
    WHEN 'JOB_SERVICE_NOTIFICATION_NOT_PROVIDED' THEN 8000
    WHEN 'BIND_APPLICATION' THEN 15000
    WHEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT' THEN 180000
    WHEN 'FOREGROUND_SERVICE_TIMEOUT' THEN 30000
    ELSE NULL
  END;

-- The duration in ms a watchdog subject states ('... Blocked in ... for
-- 12s ...'), or NULL.
CREATE PERFETTO FUNCTION _extract_anr_duration_from_subject(subject STRING)
RETURNS LONG
AS
SELECT
  iif(
    $subject GLOB '*Blocked in* for *s*',
    CAST(regexp_extract($subject, ' for ([0-9]+)s') * 1000 AS INT),
    NULL
  );

-- The ANR type of an ANR timer's name where it is not already one
-- (JobScheduler has none).
CREATE PERFETTO FUNCTION _platform_to_standard_anr_type(platform STRING)
RETURNS STRING
AS
SELECT
  CASE $platform
    WHEN 'BROADCAST_TIMEOUT' THEN 'BROADCAST_OF_INTENT'
    WHEN 'SERVICE_TIMEOUT' THEN 'EXECUTING_SERVICE'
    WHEN 'SHORT_FGS_TIMEOUT' THEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT'
    WHEN 'SERVICE_FOREGROUND_TIMEOUT' THEN 'FOREGROUND_SERVICE_TIMEOUT'
    WHEN 'JobScheduler' THEN NULL
    ELSE $platform
  END;

-- The intent of a broadcast ANR: its act= value, else what follows
-- 'Broadcast of ' up to '/u'.
CREATE PERFETTO FUNCTION _get_intent(anr_type STRING, subject STRING)
RETURNS STRING
AS
SELECT
  CASE
    WHEN $anr_type != 'BROADCAST_OF_INTENT' THEN NULL
    WHEN $subject GLOB 'Broadcast of Intent *act=*'
      THEN str_split(substr($subject, instr($subject, 'act=') + 4), ' ', 0)
    WHEN $subject GLOB 'Broadcast of */u*'
      THEN str_split(substr($subject, instr($subject, 'Broadcast of ') + 13), '/u', 0)
    ELSE NULL
  END AS intent;

-- The component an ANR names, read from where each type's subject has it.
CREATE PERFETTO FUNCTION _get_component(anr_type STRING, subject STRING)
RETURNS STRING
AS
SELECT
  CASE $anr_type
    WHEN 'BROADCAST_OF_INTENT'
      THEN str_split(substr($subject, instr($subject, ' cmp=') + 5), ' ', 0)
    WHEN 'INPUT_DISPATCHING_TIMEOUT'
      THEN str_split(substr($subject, instr($subject, '(') + 1), ' ', 1)
    WHEN 'START_FOREGROUND_SERVICE'
      -- The word after the one starting with ' u' (the user).
      THEN str_split(
        substr(
          $subject,
          instr($subject, ' u') + 1 + instr(substr($subject, instr($subject, ' u') + 1), ' ')
        ),
        ' ',
        0
      )
    WHEN 'EXECUTING_SERVICE'
      THEN str_split(substr($subject, instr($subject, 'executing service ') + 18), ',', 0)
    WHEN 'FOREGROUND_SHORT_SERVICE_TIMEOUT'
      THEN str_split(substr($subject, instr($subject, 'ComponentInfo{') + 14), '}', 0)
    WHEN 'FOREGROUND_SERVICE_TIMEOUT'
      THEN str_split(substr($subject, instr($subject, 'ComponentInfo{') + 14), '}', 0)
    WHEN 'APP_TRIGGERED'
      THEN substr($subject, instr($subject, 'App requested: ') + 15)
    ELSE NULL
  END AS component;

-- One row per ANR system_server reported. The ErrorId counter names the
-- process ('ErrorId:<name>#<uuid>' or 'ErrorId:<name> <pid>#<uuid>'), the
-- Subject counter the subject line; the ANR timer slice expired(timer,
-- pid, uid, type, timeout_ms) of the same pid closest before the report
-- gives the type and timeout where there is one, the subject otherwise.
CREATE PERFETTO TABLE android_anrs(
  -- The process that did not respond.
  process_name STRING,
  -- Its pid, when the counter gives it.
  pid LONG,
  -- Its process (by pid).
  upid JOINID(process.id),
  -- The ANR's id (a UUID made by the platform).
  error_id STRING,
  -- When it was reported.
  ts TIMESTAMP,
  -- Its subject line.
  subject STRING,
  -- The intent behind it, for broadcasts.
  intent STRING,
  -- The component it names, where its type has one.
  component STRING,
  -- From the timer's expiry to the report.
  timer_delay LONG,
  -- Its type.
  anr_type STRING,
  -- Its timeout in ms, from the timer or the subject.
  anr_dur_ms LONG,
  -- The usual timeout of its type in ms on AOSP and Pixel.
  default_anr_dur_ms LONG
)
AS
WITH
  reports AS (
    SELECT
      str_split(substr(str_split(t.name, '#', 0), 9), ' ', 0) AS process_name,
      CAST(str_split(substr(str_split(t.name, '#', 0), 9), ' ', 1) AS INT) AS pid,
      str_split(t.name, '#', 1) AS error_id,
      c.ts
    FROM process_counter_track AS t
    JOIN process AS p ON p.upid = t.upid
    JOIN counter AS c ON c.track_id = t.id
    WHERE t.name GLOB 'ErrorId:*' AND p.name = 'system_server'
  ),
  subjects AS (
    -- 'Subject(for ErrorId <uuid>):<subject>'
    SELECT
      substr(str_split(t.name, ')', 0), 21) AS error_id,
      substr(t.name, length(str_split(t.name, ')', 0)) + 3) AS subject
    FROM process_counter_track AS t
    JOIN process AS p ON p.upid = t.upid
    WHERE t.name GLOB 'Subject(for ErrorId *' AND p.name = 'system_server'
  ),
  timers AS (
    SELECT
      timer_ts,
      CAST(str_split(params, ',', 0) AS INT) AS timer_id,
      CAST(str_split(params, ',', 1) AS INT) AS pid,
      CAST(str_split(params, ',', 2) AS INT) AS uid,
      str_split(params, ',', 3) AS anr_type,
      CAST(str_split(params, ',', 4) AS INT) AS anr_dur_ms
    FROM (
      SELECT s.ts AS timer_ts, trim(substr(s.name, 9), ')') AS params
      FROM slices AS s
      WHERE s.name GLOB 'expired(*,*,*,*,*)'
    )
  ),
  -- Each report with the timers of its pid that expired before it (or
  -- none), the closest first.
  candidates AS (
    SELECT
      r.error_id,
      tm.timer_ts,
      tm.anr_type,
      tm.anr_dur_ms,
      row_number() OVER (
        PARTITION BY r.error_id
        ORDER BY tm.timer_ts IS NULL, r.ts - tm.timer_ts
      ) AS pos
    FROM reports AS r
    LEFT JOIN timers AS tm ON tm.pid = r.pid
    WHERE tm.pid IS NULL OR r.ts >= tm.timer_ts
  ),
  merged AS (
    SELECT
      r.process_name,
      r.pid,
      p.upid,
      r.error_id,
      r.ts,
      s.subject,
      r.ts - b.timer_ts AS timer_delay,
      coalesce(
        _platform_to_standard_anr_type(b.anr_type),
        _extract_anr_type(s.subject, r.process_name)
      ) AS anr_type,
      coalesce(b.anr_dur_ms, _extract_anr_duration_from_subject(s.subject)) AS anr_dur_ms
    FROM reports AS r
    LEFT JOIN subjects AS s ON s.error_id = r.error_id
    LEFT JOIN candidates AS b ON b.error_id = r.error_id AND b.pos = 1
    LEFT JOIN process AS p ON p.pid = r.pid
  )
SELECT
  m.process_name,
  m.pid,
  m.upid,
  m.error_id,
  m.ts,
  m.anr_type,
  m.subject,
  _get_intent(m.anr_type, m.subject) AS intent,
  _get_component(m.anr_type, m.subject) AS component,
  m.timer_delay,
  m.anr_dur_ms,
  _default_anr_dur(m.anr_type, m.subject) AS default_anr_dur_ms
FROM merged AS m;
