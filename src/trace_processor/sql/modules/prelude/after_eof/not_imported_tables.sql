-- SPDX-License-Identifier: Apache-2.0
-- prelude.after_eof.not_imported_tables: tables Perfetto fills from data
-- our importers do not read (GPU descriptors and GPU counter groups,
-- smaps and Chrome memory dumps, aggregate pprof profiles, video
-- frames). They exist, empty, with Perfetto's columns and declared types
-- (`pragma table_info` shows the same), so that the UI's plugins that
-- read them on every trace find nothing to show instead of failing the
-- load. An importer that comes to
-- fill one of them makes it a real table and drops it from here. The
-- trace's file list has a file of its own (trace_file.sql); its
-- diagnostics are a table of the import (__intrinsic_trace_diagnostics).

-- The GPUs of the machines traced (GpuInfo).
CREATE TABLE gpu(
  id INTEGER,
  ugpu INTEGER,
  gpu INTEGER,
  name TEXT,
  vendor TEXT,
  model TEXT,
  architecture TEXT,
  uuid TEXT,
  pci_bdf TEXT,
  machine_id INTEGER,
  arg_set_id INTEGER
);

-- The groups a GPU's counters belong to (GpuCounterDescriptor).
CREATE TABLE gpu_counter_group(
  id INTEGER,
  group_id INTEGER,
  track_id INTEGER,
  name TEXT,
  description TEXT
);

-- One row per mapping of a process's smaps (SmapsPacket).
CREATE TABLE process_memory_mappings(
  id INTEGER,
  upid INTEGER,
  ts INTEGER,
  path TEXT,
  aggregate_count INTEGER,
  is_deleted INTEGER,
  size_kb INTEGER,
  rss_kb INTEGER,
  anonymous_kb INTEGER,
  swap_kb INTEGER,
  shared_clean_kb INTEGER,
  shared_dirty_kb INTEGER,
  private_clean_kb INTEGER,
  private_dirty_kb INTEGER,
  locked_kb INTEGER,
  pss_kb INTEGER,
  pss_dirty_kb INTEGER,
  swap_pss_kb INTEGER
);

-- Chrome's memory-infra dumps (MemoryTrackerSnapshot): the dumps, each
-- process's part of one, and the nodes of its allocator tree.
CREATE TABLE memory_snapshot(
  id INTEGER,
  timestamp INTEGER,
  track_id INTEGER,
  detail_level TEXT
);

CREATE TABLE process_memory_snapshot(
  id INTEGER,
  snapshot_id INTEGER,
  upid INTEGER
);

CREATE TABLE memory_snapshot_node(
  id INTEGER,
  process_snapshot_id INTEGER,
  parent_node_id INTEGER,
  path TEXT,
  size INTEGER,
  effective_size INTEGER,
  arg_set_id INTEGER
);

-- The sample types of aggregate (pprof) profiles.
CREATE TABLE __intrinsic_aggregate_profile(
  id INTEGER PRIMARY KEY,
  scope TEXT,
  name TEXT,
  sample_type_type TEXT,
  sample_type_unit TEXT
);

-- Frames of screen recordings (video frames data source).
CREATE TABLE __intrinsic_video_frames(
  id INTEGER PRIMARY KEY,
  ts INTEGER,
  display_id INTEGER,
  display_name TEXT,
  codec_string TEXT,
  frame_number INTEGER,
  codec INTEGER,
  is_key_frame INTEGER,
  pts_us INTEGER,
  is_config INTEGER
);

-- The graphics contexts (GL context, VkDevice, ...) that GPU render stage
-- events name through InternedGraphicsContext, with their process and API.
CREATE TABLE __intrinsic_gpu_context(
  id INTEGER PRIMARY KEY,
  context_id INTEGER,
  pid INTEGER,
  api TEXT
);

-- ARM Statistical Profiling Extension records (the aux data of perf.data
-- files recorded with arm_spe; events_bitmask holds the record's event bits).
CREATE TABLE __intrinsic_spe_record(
  id INTEGER PRIMARY KEY,
  ts INTEGER,
  utid INTEGER,
  exception_level TEXT,
  instruction_frame_id INTEGER,
  operation TEXT,
  data_virtual_address INTEGER,
  data_physical_address INTEGER,
  total_latency INTEGER,
  issue_latency INTEGER,
  translation_latency INTEGER,
  events_bitmask INTEGER,
  data_source TEXT
);
