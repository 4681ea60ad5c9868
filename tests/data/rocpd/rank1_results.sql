-- A rocprofv3 rocpd database (ROCm 7 default output, 4243_results.db) of rank 1
-- of a 2-stage torch.distributed.pipelining run on a 2-GPU node, hand-made in the
-- documented schema; see README.md beside this file. Run UUID 0197c2a4-8e1f-7b41-8c2d-5e6f708192b3.
-- Tables of rocpd schema 3 (rocprofiler-sdk, source/share/rocprofiler-sdk-rocpd/
-- rocpd_tables.sql, "RocPD schema version 3.0.1"), with _0197c2a4_8e1f_7b41_8c2d_5e6f708192b3 the run's UUID suffix as
-- rocprofv3 writes it. Only the tables a kernel/memory-copy/marker trace fills are
-- created, and the PMC and PC-sampling tables are left out.
CREATE TABLE "rocpd_metadata_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "tag" TEXT NOT NULL,
    "value" TEXT NOT NULL);
CREATE TABLE "rocpd_string_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "string" TEXT NOT NULL UNIQUE ON CONFLICT ABORT);
CREATE TABLE "rocpd_info_node_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "hash" BIGINT NOT NULL UNIQUE,
    "machine_id" TEXT NOT NULL UNIQUE,
    "system_name" TEXT, "hostname" TEXT, "release" TEXT, "version" TEXT,
    "hardware_name" TEXT, "domain_name" TEXT);
CREATE TABLE "rocpd_info_process_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL,
    "init" BIGINT, "fini" BIGINT, "start" BIGINT, "end" BIGINT, "command" TEXT,
    "environment" JSONB DEFAULT "{}" NOT NULL,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_thread_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL,
    "name" TEXT, "start" BIGINT, "end" BIGINT,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_agent_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL,
    "type" TEXT CHECK ("type" IN ('CPU', 'GPU', 'NIC')),
    "absolute_index" INTEGER, "logical_index" INTEGER, "type_index" INTEGER, "uuid" INTEGER,
    "name" TEXT, "model_name" TEXT, "vendor_name" TEXT, "product_name" TEXT, "user_name" TEXT,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_queue_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_stream_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_code_object_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "agent_id" INTEGER, "uri" TEXT,
    "load_base" BIGINT, "load_size" BIGINT, "load_delta" BIGINT,
    "storage_type" TEXT CHECK ("storage_type" IN ('FILE', 'MEMORY')),
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_kernel_symbol_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "code_object_id" INTEGER NOT NULL,
    "kernel_name" TEXT, "display_name" TEXT, "kernel_object" INTEGER,
    "kernarg_segment_size" INTEGER, "kernarg_segment_alignment" INTEGER,
    "group_segment_size" INTEGER, "private_segment_size" INTEGER,
    "sgpr_count" INTEGER, "arch_vgpr_count" INTEGER, "accum_vgpr_count" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_track_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER, "tid" INTEGER, "name_id" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_event_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "category_id" INTEGER, "stack_id" INTEGER, "parent_stack_id" INTEGER,
    "correlation_id" INTEGER,
    "call_stack" JSONB DEFAULT "{}" NOT NULL,
    "line_info" JSONB DEFAULT "{}" NOT NULL,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_arg_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "event_id" INTEGER NOT NULL, "position" INTEGER NOT NULL, "type" TEXT NOT NULL,
    "name" TEXT NOT NULL, "value" TEXT,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_region_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL,
    "start" BIGINT NOT NULL, "end" BIGINT NOT NULL, "name_id" INTEGER NOT NULL,
    "event_id" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_sample_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "track_id" INTEGER NOT NULL, "timestamp" BIGINT NOT NULL, "event_id" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_kernel_dispatch_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER,
    "agent_id" INTEGER NOT NULL, "kernel_id" INTEGER NOT NULL, "dispatch_id" INTEGER NOT NULL,
    "queue_id" INTEGER NOT NULL, "stream_id" INTEGER NOT NULL,
    "start" BIGINT NOT NULL, "end" BIGINT NOT NULL,
    "private_segment_size" INTEGER, "group_segment_size" INTEGER,
    "workgroup_size_x" INTEGER NOT NULL, "workgroup_size_y" INTEGER NOT NULL,
    "workgroup_size_z" INTEGER NOT NULL,
    "grid_size_x" INTEGER NOT NULL, "grid_size_y" INTEGER NOT NULL, "grid_size_z" INTEGER NOT NULL,
    "region_name_id" INTEGER, "event_id" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_memory_copy_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER,
    "start" BIGINT NOT NULL, "end" BIGINT NOT NULL, "name_id" INTEGER NOT NULL,
    "dst_agent_id" INTEGER, "dst_address" INTEGER, "src_agent_id" INTEGER, "src_address" INTEGER,
    "size" INTEGER NOT NULL, "queue_id" INTEGER, "stream_id" INTEGER,
    "region_name_id" INTEGER, "event_id" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_memory_allocate_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1f-7b41-8c2d-5e6f708192b3" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER, "agent_id" INTEGER,
    "type" TEXT CHECK ("type" IN ('ALLOC', 'FREE', 'REALLOC', 'RECLAIM')),
    "level" TEXT CHECK ("level" IN ('REAL', 'VIRTUAL', 'SCRATCH')),
    "start" BIGINT NOT NULL, "end" BIGINT NOT NULL, "address" INTEGER, "size" INTEGER NOT NULL,
    "queue_id" INTEGER, "stream_id" INTEGER, "event_id" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);

-- The un-suffixed views rocprofv3 adds (here only the pass-through ones and a short
-- `kernels`; PerFlow reads the tables and never runs a view).
CREATE VIEW "rocpd_metadata" AS SELECT * FROM "rocpd_metadata_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_string" AS SELECT * FROM "rocpd_string_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_info_node" AS SELECT * FROM "rocpd_info_node_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_info_process" AS SELECT * FROM "rocpd_info_process_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_info_thread" AS SELECT * FROM "rocpd_info_thread_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_info_agent" AS SELECT * FROM "rocpd_info_agent_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_info_queue" AS SELECT * FROM "rocpd_info_queue_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_info_stream" AS SELECT * FROM "rocpd_info_stream_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_info_code_object" AS SELECT * FROM "rocpd_info_code_object_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_info_kernel_symbol" AS SELECT * FROM "rocpd_info_kernel_symbol_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_track" AS SELECT * FROM "rocpd_track_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_event" AS SELECT * FROM "rocpd_event_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_arg" AS SELECT * FROM "rocpd_arg_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_region" AS SELECT * FROM "rocpd_region_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_sample" AS SELECT * FROM "rocpd_sample_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_kernel_dispatch" AS SELECT * FROM "rocpd_kernel_dispatch_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_memory_copy" AS SELECT * FROM "rocpd_memory_copy_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "rocpd_memory_allocate" AS SELECT * FROM "rocpd_memory_allocate_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3";
CREATE VIEW "kernels" AS SELECT K.id, S.display_name AS name, A.type_index AS agent_type_index, K.queue_id, K.stream_id, K.start, K."end", K."end" - K.start AS duration FROM "rocpd_kernel_dispatch" K JOIN "rocpd_info_agent" A ON A.id = K.agent_id JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id;

INSERT INTO "rocpd_metadata_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (tag, value) VALUES
    ('schema_version', '3'),
    ('uuid', '0197c2a4_8e1f_7b41_8c2d_5e6f708192b3'),
    ('guid', '0197c2a4-8e1f-7b41-8c2d-5e6f708192b3');
INSERT INTO "rocpd_string_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, string) VALUES
    (1, ''),
    (2, 'MARKER_CORE_RANGE_API'),
    (3, 'HIP_RUNTIME_API_EXT'),
    (4, 'KERNEL_DISPATCH'),
    (5, 'MEMORY_COPY'),
    (6, 'roctxThreadRangeA'),
    (7, 'roctxMarkA'),
    (8, 'hipLaunchKernel'),
    (9, 'hipMemcpyAsync'),
    (10, 'hipMalloc'),
    (11, 'MEMORY_COPY_HOST_TO_DEVICE');
INSERT INTO "rocpd_info_node_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, hash, machine_id, system_name, hostname, release, version, hardware_name, domain_name) VALUES
    (2718281828, 6167766012937455170, '8d2f0e0c3b9a4c7e9f1a2b3c4d5e6f70', 'Linux', 'mi300-node01', '6.8.0-45-generic', '#45-Ubuntu SMP', 'x86_64', '(none)');
INSERT INTO "rocpd_info_process_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, nid, ppid, pid, init, fini, start, end, command) VALUES
    (4243, 2718281828, 4200, 4243, 4998000000000, 5001000000000, 4998000000000, 5001000000000, 'python train_pipeline.py --stages 2 --microbatches 2');
INSERT INTO "rocpd_info_thread_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, nid, ppid, pid, tid, name) VALUES
    (4243, 2718281828, 4200, 4243, 4243, 'python'),
    (4251, 2718281828, 4200, 4243, 4251, 'pt_autograd_0');
INSERT INTO "rocpd_info_agent_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, nid, pid, type, absolute_index, logical_index, type_index, uuid, name, model_name, vendor_name, product_name, user_name) VALUES
    (0, 2718281828, 4243, 'CPU', 0, 0, 0, 0, 'AMD EPYC 9654 96-Core Processor', '', 'CPU', 'AMD EPYC 9654 96-Core Processor', 'AMD EPYC 9654 96-Core Processor'),
    (1, 2718281828, 4243, 'GPU', 1, 1, 0, 1357924680, 'gfx942', 'aqua_vanjaram', 'AMD', 'AMD Instinct MI300X', 'AMD Instinct MI300X'),
    (2, 2718281828, 4243, 'GPU', 2, 2, 1, 1357924681, 'gfx942', 'aqua_vanjaram', 'AMD', 'AMD Instinct MI300X', 'AMD Instinct MI300X');
INSERT INTO "rocpd_info_queue_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, nid, pid, name) VALUES
    (0, 2718281828, 4243, 'Default Queue'),
    (94372096, 2718281828, 4243, 'Queue 0'),
    (94372352, 2718281828, 4243, 'Queue 1');
INSERT INTO "rocpd_info_stream_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, nid, pid, name) VALUES
    (0, 2718281828, 4243, 'Default Stream');
INSERT INTO "rocpd_info_code_object_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, nid, pid, agent_id, uri, load_base, load_size, load_delta, storage_type) VALUES
    (1, 2718281828, 4243, 2, 'file:///opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so#offset=1638400&size=524288', 140000000000000, 524288, 0, 'FILE');
INSERT INTO "rocpd_info_kernel_symbol_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, nid, pid, code_object_id, kernel_name, display_name, kernel_object, kernarg_segment_size, kernarg_segment_alignment, group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count) VALUES
    (1, 2718281828, 4243, 1, '_Z8gemm_fwdPKDF16_S1_PDF16_iii.kd', 'gemm_fwd(_Float16 const*, _Float16 const*, _Float16*, int, int, int)', 140000000100064, 40, 8, 16384, 0, 48, 128, 0),
    (2, 2718281828, 4243, 1, '_Z8gelu_fwdPKDF16_PDF16_i.kd', 'gelu_fwd(_Float16 const*, _Float16*, int)', 140000000100128, 40, 8, 16384, 0, 48, 128, 0),
    (3, 2718281828, 4243, 1, '_Z10gemm_dgradPKDF16_S1_PDF16_iii.kd', 'gemm_dgrad(_Float16 const*, _Float16 const*, _Float16*, int, int, int)', 140000000100192, 40, 8, 16384, 0, 48, 128, 0),
    (4, 2718281828, 4243, 1, '_Z8gelu_bwdPKDF16_S1_PDF16_i.kd', 'gelu_bwd(_Float16 const*, _Float16 const*, _Float16*, int)', 140000000100256, 40, 8, 16384, 0, 48, 128, 0),
    (5, 2718281828, 4243, 1, '_Z10gemm_wgradPKDF16_S1_PDF16_iii.kd', 'gemm_wgrad(_Float16 const*, _Float16 const*, _Float16*, int, int, int)', 140000000100320, 40, 8, 16384, 0, 48, 128, 0),
    (6, 2718281828, 4243, 1, '_Z22ncclDevKernel_SendRecvP11ncclDevCommmP8ncclWork.kd', 'ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)', 140000000100384, 40, 8, 16384, 0, 48, 128, 0);
INSERT INTO "rocpd_event_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, category_id, stack_id, parent_stack_id, correlation_id, extdata) VALUES
    (1, 2, 201, 201, 0, '{"message":"train_step"}'),
    (2, 2, 202, 202, 0, '{"message":"step_begin"}'),
    (3, 3, 203, 203, 0, '{}'),
    (4, 3, 204, 204, 0, '{}'),
    (5, 5, 204, 204, 0, '{}'),
    (6, 2, 205, 205, 0, '{"message":"PP:1F0"}'),
    (7, 3, 206, 206, 0, '{}'),
    (8, 4, 206, 206, 0, '{}'),
    (9, 3, 207, 207, 0, '{}'),
    (10, 4, 207, 207, 0, '{}'),
    (11, 2, 208, 208, 0, '{"message":"PP:1I0"}'),
    (12, 3, 209, 209, 0, '{}'),
    (13, 4, 209, 209, 0, '{}'),
    (14, 3, 210, 210, 0, '{}'),
    (15, 4, 210, 210, 0, '{}'),
    (16, 3, 211, 211, 0, '{}'),
    (17, 4, 211, 211, 0, '{}'),
    (18, 2, 212, 212, 0, '{"message":"PP:1W0"}'),
    (19, 3, 213, 213, 0, '{}'),
    (20, 4, 213, 213, 0, '{}'),
    (21, 2, 214, 214, 0, '{"message":"PP:1F1"}'),
    (22, 3, 215, 215, 0, '{}'),
    (23, 4, 215, 215, 0, '{}'),
    (24, 3, 216, 216, 0, '{}'),
    (25, 4, 216, 216, 0, '{}'),
    (26, 2, 217, 217, 0, '{"message":"PP:1I1"}'),
    (27, 3, 218, 218, 0, '{}'),
    (28, 4, 218, 218, 0, '{}'),
    (29, 3, 219, 219, 0, '{}'),
    (30, 4, 219, 219, 0, '{}'),
    (31, 3, 220, 220, 0, '{}'),
    (32, 4, 220, 220, 0, '{}'),
    (33, 2, 221, 221, 0, '{"message":"PP:1W1"}'),
    (34, 3, 222, 222, 0, '{}'),
    (35, 4, 222, 222, 0, '{}');
INSERT INTO "rocpd_region_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (nid, pid, tid, start, end, name_id, event_id) VALUES
    (2718281828, 4243, 4243, 5000000000000, 5000000100000, 6, 1),
    (2718281828, 4243, 4243, 5000000000800, 5000000000900, 10, 3),
    (2718281828, 4243, 4243, 5000000001000, 5000000001800, 9, 4),
    (2718281828, 4243, 4243, 5000000024000, 5000000034000, 6, 6),
    (2718281828, 4243, 4243, 5000000024100, 5000000024300, 8, 7),
    (2718281828, 4243, 4243, 5000000024400, 5000000024600, 8, 9),
    (2718281828, 4243, 4243, 5000000035000, 5000000047000, 6, 11),
    (2718281828, 4243, 4251, 5000000035100, 5000000035300, 8, 12),
    (2718281828, 4243, 4251, 5000000035400, 5000000035600, 8, 14),
    (2718281828, 4243, 4251, 5000000046000, 5000000046200, 8, 16),
    (2718281828, 4243, 4243, 5000000048000, 5000000056000, 6, 18),
    (2718281828, 4243, 4251, 5000000048100, 5000000048300, 8, 19),
    (2718281828, 4243, 4243, 5000000057000, 5000000067000, 6, 21),
    (2718281828, 4243, 4243, 5000000057100, 5000000057300, 8, 22),
    (2718281828, 4243, 4243, 5000000057400, 5000000057600, 8, 24),
    (2718281828, 4243, 4243, 5000000068000, 5000000080000, 6, 26),
    (2718281828, 4243, 4251, 5000000068100, 5000000068300, 8, 27),
    (2718281828, 4243, 4251, 5000000068400, 5000000068600, 8, 29),
    (2718281828, 4243, 4251, 5000000079000, 5000000079200, 8, 31),
    (2718281828, 4243, 4243, 5000000081000, 5000000089000, 6, 33),
    (2718281828, 4243, 4251, 5000000081100, 5000000081300, 8, 34);
INSERT INTO "rocpd_track_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, nid, pid, tid, name_id) VALUES
    (1, 2718281828, 4243, 4243, 2);
INSERT INTO "rocpd_sample_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, track_id, timestamp, event_id) VALUES
    (202, 1, 5000000000500, 2);
INSERT INTO "rocpd_kernel_dispatch_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (id, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, end, private_segment_size, group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id) VALUES
    (1, 2718281828, 4243, 4243, 2, 1, 1, 94372096, 0, 5000000025000, 5000000030000, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 8),
    (2, 2718281828, 4243, 4243, 2, 2, 2, 94372096, 0, 5000000030000, 5000000032500, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 10),
    (3, 2718281828, 4243, 4251, 2, 3, 3, 94372096, 0, 5000000036000, 5000000045000, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 13),
    (4, 2718281828, 4243, 4251, 2, 4, 4, 94372096, 0, 5000000045000, 5000000047500, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 15),
    (5, 2718281828, 4243, 4251, 2, 6, 5, 94372352, 0, 5000000046500, 5000000047500, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 17),
    (6, 2718281828, 4243, 4251, 2, 5, 6, 94372096, 0, 5000000049000, 5000000054000, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 20),
    (7, 2718281828, 4243, 4243, 2, 1, 7, 94372096, 0, 5000000058000, 5000000063500, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 23),
    (8, 2718281828, 4243, 4243, 2, 2, 8, 94372096, 0, 5000000063500, 5000000066000, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 25),
    (9, 2718281828, 4243, 4251, 2, 3, 9, 94372096, 0, 5000000069000, 5000000077000, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 28),
    (10, 2718281828, 4243, 4251, 2, 4, 10, 94372096, 0, 5000000077000, 5000000079500, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 30),
    (11, 2718281828, 4243, 4251, 2, 6, 11, 94372352, 0, 5000000079500, 5000000080500, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 32),
    (12, 2718281828, 4243, 4251, 2, 5, 12, 94372096, 0, 5000000082000, 5000000087000, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 35);
INSERT INTO "rocpd_memory_copy_0197c2a4_8e1f_7b41_8c2d_5e6f708192b3" (nid, pid, tid, start, end, name_id, dst_agent_id, dst_address, src_agent_id, src_address, size, queue_id, stream_id, region_name_id, event_id) VALUES
    (2718281828, 4243, 4243, 5000000002000, 5000000012000, 11, 2, 140010000000000, 0, 139990000000000, 1048576, NULL, 0, 1, 5);
