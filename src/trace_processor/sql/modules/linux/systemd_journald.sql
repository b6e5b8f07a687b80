-- SPDX-License-Identifier: Apache-2.0
-- linux.systemd_journald: the entries of systemd's journal recorded by
-- the linux.systemd_journald data source, with their journal fields.

-- One row per journal entry (rows are in import order, not sorted by ts).
CREATE PERFETTO VIEW linux_systemd_journald_logs(
  -- The row's id in the logs table.
  id ID,
  -- When the entry was written.
  ts TIMESTAMP,
  -- The thread that wrote it, when known.
  utid JOINID(thread.id),
  -- Its syslog priority (0 emergency .. 7 debug).
  prio LONG,
  -- Its SYSLOG_IDENTIFIER (the program's tag), when set.
  tag STRING,
  -- The message.
  msg STRING,
  -- The writer's user id, when known.
  uid LONG,
  -- The writer's command name, when known.
  comm STRING,
  -- The systemd unit it came from, when known.
  systemd_unit STRING,
  -- The host's name, when known.
  hostname STRING,
  -- How it reached the journal (journal, syslog, stdout, kernel...).
  transport STRING
)
AS
SELECT
  l.id,
  l.ts,
  l.utid,
  l.prio,
  l.tag,
  l.msg,
  CAST(extract_arg(l.arg_set_id, 'uid') AS INT) AS uid,
  extract_arg(l.arg_set_id, 'comm') AS comm,
  extract_arg(l.arg_set_id, 'systemd_unit') AS systemd_unit,
  extract_arg(l.arg_set_id, 'hostname') AS hostname,
  extract_arg(l.arg_set_id, 'transport') AS transport
FROM logs AS l
WHERE l.log_source = 'systemd_journald';
