INCLUDE PERFETTO MODULE linux.perf.samples;
SELECT * FROM _callstacks_self_to_cumulative!(_linux_perf_raw_callstacks);
