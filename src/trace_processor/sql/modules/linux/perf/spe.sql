-- SPDX-License-Identifier: Apache-2.0
-- linux.perf.spe: the operations ARM's Statistical Profiling Extension sampled, with each record's event bits as columns.

-- One row per SPE record (from the aux data of perf.data files recorded with arm_spe; we do not decode those yet, so it is empty on every trace).
CREATE PERFETTO VIEW linux_perf_spe_record(
  -- When the operation was sampled.
  ts TIMESTAMP,
  -- The thread it ran in.
  utid JOINID(thread.id),
  -- The exception level it ran at.
  exception_level STRING,
  -- The frame of the instruction's virtual address.
  instruction_frame_id LONG,
  -- What kind of operation was sampled.
  operation STRING,
  -- The virtual address the operation accessed (0 if it accessed no memory).
  data_virtual_address LONG,
  -- The physical address the operation accessed (0 if it accessed no memory).
  data_physical_address LONG,
  -- Cycles from dispatch for issue to completion.
  total_latency LONG,
  -- Cycles from dispatch for issue to issue for execution.
  issue_latency LONG,
  -- Cycles the MMU took to translate the virtual address.
  translation_latency LONG,
  -- Where a load's data came from.
  data_source STRING,
  -- Event bit 0: the operation raised an exception.
  exception_gen BOOL,
  -- Bit 1: it retired architecturally.
  retired BOOL,
  -- Bit 2: it accessed the level 1 data cache.
  l1d_access BOOL,
  -- Bit 3: it refilled the level 1 data cache.
  l1d_refill BOOL,
  -- Bit 4: it accessed the TLB.
  tlb_access BOOL,
  -- Bit 5: it refilled the TLB with at least one table walk.
  tlb_refill BOOL,
  -- Bit 6: a conditional instruction failed its condition check.
  not_taken BOOL,
  -- Bit 7: a branch was mispredicted.
  mispred BOOL,
  -- Bit 8: it accessed the last level cache.
  llc_access BOOL,
  -- Bit 9: the last level cache (and those above) could not serve it.
  llc_refill BOOL,
  -- Bit 10: it accessed another socket.
  remote_access BOOL,
  -- Bit 11: its address alignment cost extra latency.
  alignment BOOL,
  -- Bit 17: it ran in transactional state. (Perfetto reads bit 17 for this column and the next alike; kept so.)
  tme_transaction BOOL,
  -- Bit 17: an SVE or SME operation with a false element in its governing predicate.
  sve_partial_pred BOOL,
  -- Bit 18: an SVE or SME operation with no true element in its governing predicate.
  sve_empty_pred BOOL,
  -- Bit 19: a load accessed at least the level 2 cache.
  l2d_access BOOL,
  -- Bit 20: a load accessed and missed the level 2 cache.
  l2d_hit BOOL,
  -- Bit 21: a load accessed modified data in a cache.
  cache_data_modified BOOL,
  -- Bit 22: a load hit a recently fetched line (the name's spelling is Perfetto's).
  recenty_fetched BOOL,
  -- Bit 23: a load snooped data from a cache outside this core's hierarchy.
  data_snooped BOOL
)
AS
SELECT
  ts, utid, exception_level, instruction_frame_id, operation,
  data_virtual_address, data_physical_address,
  total_latency, issue_latency, translation_latency, data_source,
  (events_bitmask >> 0) & 1 != 0 AS exception_gen,
  (events_bitmask >> 1) & 1 != 0 AS retired,
  (events_bitmask >> 2) & 1 != 0 AS l1d_access,
  (events_bitmask >> 3) & 1 != 0 AS l1d_refill,
  (events_bitmask >> 4) & 1 != 0 AS tlb_access,
  (events_bitmask >> 5) & 1 != 0 AS tlb_refill,
  (events_bitmask >> 6) & 1 != 0 AS not_taken,
  (events_bitmask >> 7) & 1 != 0 AS mispred,
  (events_bitmask >> 8) & 1 != 0 AS llc_access,
  (events_bitmask >> 9) & 1 != 0 AS llc_refill,
  (events_bitmask >> 10) & 1 != 0 AS remote_access,
  (events_bitmask >> 11) & 1 != 0 AS alignment,
  (events_bitmask >> 17) & 1 != 0 AS tme_transaction,
  (events_bitmask >> 17) & 1 != 0 AS sve_partial_pred,
  (events_bitmask >> 18) & 1 != 0 AS sve_empty_pred,
  (events_bitmask >> 19) & 1 != 0 AS l2d_access,
  (events_bitmask >> 20) & 1 != 0 AS l2d_hit,
  (events_bitmask >> 21) & 1 != 0 AS cache_data_modified,
  (events_bitmask >> 22) & 1 != 0 AS recenty_fetched,
  (events_bitmask >> 23) & 1 != 0 AS data_snooped
FROM __intrinsic_spe_record;
