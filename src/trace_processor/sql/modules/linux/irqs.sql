-- SPDX-License-Identifier: Apache-2.0
-- linux.irqs: hard and soft interrupts as slices (the irq_handler_* and
-- softirq_* ftrace events on the per-CPU IRQ tracks), and the IRQ number
-- to name mapping that system_info recorded.

-- Hard IRQs: one slice per handler run.
CREATE PERFETTO VIEW linux_hard_irqs(
  -- When the handler started.
  ts TIMESTAMP,
  -- How long it ran.
  dur DURATION,
  -- The IRQ's name.
  name STRING,
  -- The slice's id.
  id JOINID(slice.id),
  -- The IRQ it interrupted, if it nested in one.
  parent_id JOINID(slice.id)
)
AS
SELECT s.ts, s.dur, s.name, s.id, s.parent_id
FROM slices AS s
JOIN track AS t ON t.id = s.track_id
WHERE t.type = 'cpu_irq';

-- Soft IRQs: one slice per softirq run.
CREATE PERFETTO VIEW linux_soft_irqs(
  -- When it started.
  ts TIMESTAMP,
  -- How long it ran.
  dur DURATION,
  -- The softirq's name.
  name STRING,
  -- The slice's id.
  id JOINID(slice.id)
)
AS
SELECT s.ts, s.dur, s.name, s.id
FROM slices AS s
JOIN track AS t ON t.id = s.track_id
WHERE t.type = 'cpu_softirq';

-- Hard and soft IRQs together; soft ones have no parent here.
CREATE PERFETTO VIEW linux_irqs(
  -- When it started.
  ts TIMESTAMP,
  -- How long it ran.
  dur DURATION,
  -- Its name.
  name STRING,
  -- The slice's id.
  id JOINID(slice.id),
  -- The hard IRQ it interrupted (NULL for soft IRQs).
  parent_id JOINID(slice.id),
  -- 1 for a soft IRQ, 0 for a hard one.
  is_soft_irq BOOL
)
AS
SELECT h.ts, h.dur, h.name, h.id, h.parent_id, 0 AS is_soft_irq
FROM linux_hard_irqs AS h
UNION ALL
SELECT s.ts, s.dur, s.name, s.id, NULL AS parent_id, 1 AS is_soft_irq
FROM linux_soft_irqs AS s;

-- The IRQ numbers and names of the machines, as system_info listed them.
CREATE PERFETTO VIEW linux_interrupt_mapping(
  -- The row's id.
  id ID,
  -- The IRQ number.
  irq_id LONG,
  -- Its name.
  name STRING,
  -- The machine.
  machine_id JOINID(machine.id)
)
AS
SELECT m.id, m.irq_id, m.name, m.machine_id
FROM _linux_interrupt_mapping AS m;
