-- SPDX-License-Identifier: Apache-2.0
-- viz.summary.trace: facts about the trace's machines for the UI.

-- 1 when the machine's metadata has exactly one system_name row saying
-- Linux, else 0 (so also 0 for a NULL machine id).
CREATE PERFETTO FUNCTION _is_linux_machine(
  -- The machine, an id of the machine table.
  machine_id JOINID(machine.id)
)
RETURNS LONG
AS
SELECT count(*) = 1
FROM metadata AS m
WHERE m.name = 'system_name'
  AND m.str_value = 'Linux'
  AND m.machine_id = $machine_id;
