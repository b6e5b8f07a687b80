-- SPDX-License-Identifier: Apache-2.0
-- android.process_metadata: each process with its Android app uid, user
-- and the package it runs (from the packages_list data source), and
-- whether it is a kernel task.

INCLUDE PERFETTO MODULE android.user_list;

-- How many packages share each uid.
CREATE PERFETTO TABLE _uid_package_count AS
SELECT pl.uid, count(*) AS cnt
FROM package_list AS pl
GROUP BY pl.uid;

-- The uid of the package behind an app id: SDK sandbox (2xxxx) and
-- private compute (3xxxx) processes run under their app's id plus 10000
-- and 20000.
CREATE PERFETTO FUNCTION _app_id_to_base_package(app_id LONG)
RETURNS LONG
AS
SELECT
  CASE
    WHEN $app_id < 20000 THEN $app_id
    WHEN $app_id < 30000 THEN $app_id - 10000
    WHEN $app_id < 40000 THEN $app_id - 20000
    ELSE $app_id
  END;

-- The processes of kthreadd and pid 0 (and their children).
CREATE PERFETTO TABLE _android_kernel_tasks(
  -- The kernel task's process.
  upid LONG
)
AS
SELECT c.upid
FROM process AS c
LEFT JOIN process AS par ON par.upid = c.parent_upid
WHERE par.name = 'kthreadd' OR c.pid = 0 OR par.pid = 0
ORDER BY 1;

-- 1 if the process is a kernel task, else 0.
CREATE PERFETTO FUNCTION android_is_kernel_task(
  -- The process.
  upid LONG
)
-- Whether it is a kernel task.
RETURNS BOOL
AS
SELECT EXISTS (SELECT 1 FROM _android_kernel_tasks AS k WHERE k.upid = $upid);

-- The package each process runs: among the packages of its uid (all of
-- them when the uid has one package, else those whose name starts its
-- process name) or, for an isolated process (uid 90000-99999), the
-- packages whose name starts its process name before any ':', the one
-- whose name is longest.
CREATE PERFETTO TABLE _android_process_package AS
WITH
  cand AS (
    SELECT
      p.upid,
      pl.package_name,
      pl.version_code,
      pl.debuggable,
      row_number() OVER (
        PARTITION BY p.upid
        ORDER BY length(p.name) - length(pl.package_name), pl.id
      ) AS pos
    FROM process AS p
    LEFT JOIN _uid_package_count AS n
      ON n.uid = _app_id_to_base_package(p.android_appid)
    JOIN package_list AS pl
      ON (
        pl.uid = _app_id_to_base_package(p.android_appid)
        AND (n.cnt = 1 OR p.name GLOB pl.package_name || '*')
      )
      OR (
        _app_id_to_base_package(p.android_appid) >= 90000
        AND _app_id_to_base_package(p.android_appid) < 100000
        AND str_split(p.name, ':', 0) GLOB pl.package_name || '*'
      )
  )
SELECT c.upid, c.package_name, c.version_code, c.debuggable
FROM cand AS c
WHERE c.pos = 1;

-- Every process with its Android identity.
CREATE PERFETTO TABLE android_process_metadata(
  -- The process.
  upid JOINID(process.id),
  -- Its pid.
  pid LONG,
  -- Its name: the command line instead where the 15-character kernel name
  -- is a cut of it, or the command line still says zygote (a process
  -- caught right after fork, on Android before T).
  process_name STRING,
  -- Its Android app id.
  uid LONG,
  -- 1 if several packages share the uid, else NULL.
  shared_uid BOOL,
  -- Its Android user id (multi-user devices).
  user_id LONG,
  -- That user's kind (HEADLESS, SECONDARY, ...).
  user_type STRING,
  -- The package it runs.
  package_name STRING,
  -- That package's version code.
  version_code LONG,
  -- Whether that package is debuggable.
  debuggable LONG,
  -- Whether it is a kernel task.
  is_kernel_task BOOL
)
AS
SELECT
  p.upid,
  p.pid,
  CASE
    WHEN length(p.name) = 15
      AND (p.cmdline IN ('zygote', 'zygote64', '<pre-initialized>')
        OR p.cmdline GLOB '*' || p.name)
      THEN p.cmdline
    ELSE p.name
  END AS process_name,
  p.android_appid AS uid,
  p.android_user_id AS user_id,
  u.type AS user_type,
  iif(n.cnt > 1, 1, NULL) AS shared_uid,
  pk.package_name,
  pk.version_code,
  pk.debuggable,
  android_is_kernel_task(p.upid) AS is_kernel_task
FROM process AS p
LEFT JOIN _uid_package_count AS n ON n.uid = _app_id_to_base_package(p.android_appid)
LEFT JOIN _android_process_package AS pk ON pk.upid = p.upid
LEFT JOIN android_user_list AS u ON u.android_user_id = p.android_user_id
ORDER BY p.upid;
