-- SPDX-License-Identifier: Apache-2.0
-- prelude.after_eof.logs: the log entries of every source (systemd's
-- journal today) and Android's logcat ones, as Perfetto names them.

-- Every log entry: when, which thread, its priority and source
-- ('systemd_journald', 'android_logcat'), tag and message, and the
-- source's own fields as args.
CREATE VIEW logs AS
SELECT id, ts, utid, prio, log_source, tag, msg, arg_set_id
FROM __intrinsic_logs;

-- The entries of Android's logcat.
CREATE VIEW android_logs AS
SELECT id, ts, utid, prio, tag, msg
FROM __intrinsic_logs
WHERE log_source = 'android_logcat';
