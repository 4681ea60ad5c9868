-- A rocprofv3 rocpd database (ROCm 7 default output, 4242_results.db) of rank 0
-- of a 2-stage torch.distributed.pipelining run on a 2-GPU node, hand-made in the
-- documented schema; see README.md beside this file. Run UUID 0197c2a4-8e1b-7a3c-9d5e-4f60718293a4.
-- Tables of rocpd schema 3 (rocprofiler-sdk, source/share/rocprofiler-sdk-rocpd/
-- rocpd_tables.sql, "RocPD schema version 3.0.1"), with _0197c2a4_8e1b_7a3c_9d5e_4f60718293a4 the run's UUID suffix as
-- rocprofv3 writes it. Only the tables a kernel/memory-copy/marker trace fills are
-- created, and the PMC and PC-sampling tables are left out.
CREATE TABLE "rocpd_metadata_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "tag" TEXT NOT NULL,
    "value" TEXT NOT NULL);
CREATE TABLE "rocpd_string_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "string" TEXT NOT NULL UNIQUE ON CONFLICT ABORT);
CREATE TABLE "rocpd_info_node_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "hash" BIGINT NOT NULL UNIQUE,
    "machine_id" TEXT NOT NULL UNIQUE,
    "system_name" TEXT, "hostname" TEXT, "release" TEXT, "version" TEXT,
    "hardware_name" TEXT, "domain_name" TEXT);
CREATE TABLE "rocpd_info_process_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL,
    "init" BIGINT, "fini" BIGINT, "start" BIGINT, "end" BIGINT, "command" TEXT,
    "environment" JSONB DEFAULT "{}" NOT NULL,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_thread_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL,
    "name" TEXT, "start" BIGINT, "end" BIGINT,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_agent_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL,
    "type" TEXT CHECK ("type" IN ('CPU', 'GPU', 'NIC')),
    "absolute_index" INTEGER, "logical_index" INTEGER, "type_index" INTEGER, "uuid" INTEGER,
    "name" TEXT, "model_name" TEXT, "vendor_name" TEXT, "product_name" TEXT, "user_name" TEXT,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_queue_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_stream_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_code_object_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "agent_id" INTEGER, "uri" TEXT,
    "load_base" BIGINT, "load_size" BIGINT, "load_delta" BIGINT,
    "storage_type" TEXT CHECK ("storage_type" IN ('FILE', 'MEMORY')),
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_info_kernel_symbol_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "code_object_id" INTEGER NOT NULL,
    "kernel_name" TEXT, "display_name" TEXT, "kernel_object" INTEGER,
    "kernarg_segment_size" INTEGER, "kernarg_segment_alignment" INTEGER,
    "group_segment_size" INTEGER, "private_segment_size" INTEGER,
    "sgpr_count" INTEGER, "arch_vgpr_count" INTEGER, "accum_vgpr_count" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_track_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER, "tid" INTEGER, "name_id" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_event_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "category_id" INTEGER, "stack_id" INTEGER, "parent_stack_id" INTEGER,
    "correlation_id" INTEGER,
    "call_stack" JSONB DEFAULT "{}" NOT NULL,
    "line_info" JSONB DEFAULT "{}" NOT NULL,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_arg_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "event_id" INTEGER NOT NULL, "position" INTEGER NOT NULL, "type" TEXT NOT NULL,
    "name" TEXT NOT NULL, "value" TEXT,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_region_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL,
    "start" BIGINT NOT NULL, "end" BIGINT NOT NULL, "name_id" INTEGER NOT NULL,
    "event_id" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_sample_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "track_id" INTEGER NOT NULL, "timestamp" BIGINT NOT NULL, "event_id" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_kernel_dispatch_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
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
CREATE TABLE "rocpd_memory_copy_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER,
    "start" BIGINT NOT NULL, "end" BIGINT NOT NULL, "name_id" INTEGER NOT NULL,
    "dst_agent_id" INTEGER, "dst_address" INTEGER, "src_agent_id" INTEGER, "src_address" INTEGER,
    "size" INTEGER NOT NULL, "queue_id" INTEGER, "stream_id" INTEGER,
    "region_name_id" INTEGER, "event_id" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);
CREATE TABLE "rocpd_memory_allocate_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "guid" TEXT DEFAULT "0197c2a4-8e1b-7a3c-9d5e-4f60718293a4" NOT NULL,
    "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER, "agent_id" INTEGER,
    "type" TEXT CHECK ("type" IN ('ALLOC', 'FREE', 'REALLOC', 'RECLAIM')),
    "level" TEXT CHECK ("level" IN ('REAL', 'VIRTUAL', 'SCRATCH')),
    "start" BIGINT NOT NULL, "end" BIGINT NOT NULL, "address" INTEGER, "size" INTEGER NOT NULL,
    "queue_id" INTEGER, "stream_id" INTEGER, "event_id" INTEGER,
    "extdata" JSONB DEFAULT "{}" NOT NULL);

-- The un-suffixed views rocprofv3 adds (here only the pass-through ones and a short
-- `kernels`; PerFlow reads the tables and never runs a view).
CREATE VIEW "rocpd_metadata" AS SELECT * FROM "rocpd_metadata_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_string" AS SELECT * FROM "rocpd_string_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_info_node" AS SELECT * FROM "rocpd_info_node_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_info_process" AS SELECT * FROM "rocpd_info_process_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_info_thread" AS SELECT * FROM "rocpd_info_thread_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_info_agent" AS SELECT * FROM "rocpd_info_agent_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_info_queue" AS SELECT * FROM "rocpd_info_queue_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_info_stream" AS SELECT * FROM "rocpd_info_stream_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_info_code_object" AS SELECT * FROM "rocpd_info_code_object_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_info_kernel_symbol" AS SELECT * FROM "rocpd_info_kernel_symbol_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_track" AS SELECT * FROM "rocpd_track_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_event" AS SELECT * FROM "rocpd_event_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_arg" AS SELECT * FROM "rocpd_arg_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_region" AS SELECT * FROM "rocpd_region_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_sample" AS SELECT * FROM "rocpd_sample_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_kernel_dispatch" AS SELECT * FROM "rocpd_kernel_dispatch_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_memory_copy" AS SELECT * FROM "rocpd_memory_copy_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "rocpd_memory_allocate" AS SELECT * FROM "rocpd_memory_allocate_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4";
CREATE VIEW "kernels" AS SELECT K.id, S.display_name AS name, A.type_index AS agent_type_index, K.queue_id, K.stream_id, K.start, K."end", K."end" - K.start AS duration FROM "rocpd_kernel_dispatch" K JOIN "rocpd_info_agent" A ON A.id = K.agent_id JOIN "rocpd_info_kernel_symbol" S ON S.id = K.kernel_id;

INSERT INTO "rocpd_metadata_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (tag, value) VALUES
    ('schema_version', '3'),
    ('uuid', '0197c2a4_8e1b_7a3c_9d5e_4f60718293a4'),
    ('guid', '0197c2a4-8e1b-7a3c-9d5e-4f60718293a4');
INSERT INTO "rocpd_string_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, string) VALUES
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
INSERT INTO "rocpd_info_node_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, hash, machine_id, system_name, hostname, release, version, hardware_name, domain_name) VALUES
    (2718281828, 6167766012937455170, '8d2f0e0c3b9a4c7e9f1a2b3c4d5e6f70', 'Linux', 'mi300-node01', '6.8.0-45-generic', '#45-Ubuntu SMP', 'x86_64', '(none)');
INSERT INTO "rocpd_info_process_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, nid, ppid, pid, init, fini, start, end, command) VALUES
    (4242, 2718281828, 4200, 4242, 4998000000000, 5001000000000, 4998000000000, 5001000000000, 'python train_pipeline.py --stages 2 --microbatches 2');
INSERT INTO "rocpd_info_thread_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, nid, ppid, pid, tid, name) VALUES
    (4242, 2718281828, 4200, 4242, 4242, 'python'),
    (4250, 2718281828, 4200, 4242, 4250, 'pt_autograd_0');
INSERT INTO "rocpd_info_agent_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, nid, pid, type, absolute_index, logical_index, type_index, uuid, name, model_name, vendor_name, product_name, user_name) VALUES
    (0, 2718281828, 4242, 'CPU', 0, 0, 0, 0, 'AMD EPYC 9654 96-Core Processor', '', 'CPU', 'AMD EPYC 9654 96-Core Processor', 'AMD EPYC 9654 96-Core Processor'),
    (1, 2718281828, 4242, 'GPU', 1, 1, 0, 1357924680, 'gfx942', 'aqua_vanjaram', 'AMD', 'AMD Instinct MI300X', 'AMD Instinct MI300X'),
    (2, 2718281828, 4242, 'GPU', 2, 2, 1, 1357924681, 'gfx942', 'aqua_vanjaram', 'AMD', 'AMD Instinct MI300X', 'AMD Instinct MI300X');
INSERT INTO "rocpd_info_queue_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, nid, pid, name) VALUES
    (0, 2718281828, 4242, 'Default Queue'),
    (94371840, 2718281828, 4242, 'Queue 0'),
    (94372096, 2718281828, 4242, 'Queue 1');
INSERT INTO "rocpd_info_stream_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, nid, pid, name) VALUES
    (0, 2718281828, 4242, 'Default Stream');
INSERT INTO "rocpd_info_code_object_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, nid, pid, agent_id, uri, load_base, load_size, load_delta, storage_type) VALUES
    (1, 2718281828, 4242, 1, 'file:///opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_hip.so#offset=1638400&size=524288', 140000000000000, 524288, 0, 'FILE');
INSERT INTO "rocpd_info_kernel_symbol_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, nid, pid, code_object_id, kernel_name, display_name, kernel_object, kernarg_segment_size, kernarg_segment_alignment, group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count) VALUES
    (1, 2718281828, 4242, 1, '_Z8gemm_fwdPKDF16_S1_PDF16_iii.kd', 'gemm_fwd(_Float16 const*, _Float16 const*, _Float16*, int, int, int)', 140000000100064, 40, 8, 16384, 0, 48, 128, 0),
    (2, 2718281828, 4242, 1, '_Z8gelu_fwdPKDF16_PDF16_i.kd', 'gelu_fwd(_Float16 const*, _Float16*, int)', 140000000100128, 40, 8, 16384, 0, 48, 128, 0),
    (3, 2718281828, 4242, 1, '_Z10gemm_dgradPKDF16_S1_PDF16_iii.kd', 'gemm_dgrad(_Float16 const*, _Float16 const*, _Float16*, int, int, int)', 140000000100192, 40, 8, 16384, 0, 48, 128, 0),
    (4, 2718281828, 4242, 1, '_Z8gelu_bwdPKDF16_S1_PDF16_i.kd', 'gelu_bwd(_Float16 const*, _Float16 const*, _Float16*, int)', 140000000100256, 40, 8, 16384, 0, 48, 128, 0),
    (5, 2718281828, 4242, 1, '_Z10gemm_wgradPKDF16_S1_PDF16_iii.kd', 'gemm_wgrad(_Float16 const*, _Float16 const*, _Float16*, int, int, int)', 140000000100320, 40, 8, 16384, 0, 48, 128, 0),
    (6, 2718281828, 4242, 1, '_Z22ncclDevKernel_SendRecvP11ncclDevCommmP8ncclWork.kd', 'ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)', 140000000100384, 40, 8, 16384, 0, 48, 128, 0);
INSERT INTO "rocpd_event_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, category_id, stack_id, parent_stack_id, correlation_id, extdata) VALUES
    (1, 2, 101, 101, 0, '{"message":"train_step"}'),
    (2, 2, 102, 102, 0, '{"message":"step_begin"}'),
    (3, 3, 103, 103, 0, '{}'),
    (4, 3, 104, 104, 0, '{}'),
    (5, 5, 104, 104, 0, '{}'),
    (6, 2, 105, 105, 0, '{"message":"PP:0F0"}'),
    (7, 3, 106, 106, 0, '{}'),
    (8, 4, 106, 106, 0, '{}'),
    (9, 3, 107, 107, 0, '{}'),
    (10, 4, 107, 107, 0, '{}'),
    (11, 3, 108, 108, 0, '{}'),
    (12, 4, 108, 108, 0, '{}'),
    (13, 2, 109, 109, 0, '{"message":"PP:0F1"}'),
    (14, 3, 110, 110, 0, '{}'),
    (15, 4, 110, 110, 0, '{}'),
    (16, 3, 111, 111, 0, '{}'),
    (17, 4, 111, 111, 0, '{}'),
    (18, 3, 112, 112, 0, '{}'),
    (19, 4, 112, 112, 0, '{}'),
    (20, 2, 113, 113, 0, '{"message":"PP:0I0"}'),
    (21, 3, 114, 114, 0, '{}'),
    (22, 4, 114, 114, 0, '{}'),
    (23, 3, 115, 115, 0, '{}'),
    (24, 4, 115, 115, 0, '{}'),
    (25, 2, 116, 116, 0, '{"message":"PP:0W0"}'),
    (26, 3, 117, 117, 0, '{}'),
    (27, 4, 117, 117, 0, '{}'),
    (28, 2, 118, 118, 0, '{"message":"PP:0I1"}'),
    (29, 3, 119, 119, 0, '{}'),
    (30, 4, 119, 119, 0, '{}'),
    (31, 3, 120, 120, 0, '{}'),
    (32, 4, 120, 120, 0, '{}'),
    (33, 2, 121, 121, 0, '{"message":"PP:0W1"}'),
    (34, 3, 122, 122, 0, '{}'),
    (35, 4, 122, 122, 0, '{}');
INSERT INTO "rocpd_region_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (nid, pid, tid, start, end, name_id, event_id) VALUES
    (2718281828, 4242, 4242, 5000000000000, 5000000100000, 6, 1),
    (2718281828, 4242, 4242, 5000000000800, 5000000000900, 10, 3),
    (2718281828, 4242, 4242, 5000000001000, 5000000001800, 9, 4),
    (2718281828, 4242, 4242, 5000000013000, 5000000023000, 6, 6),
    (2718281828, 4242, 4242, 5000000013100, 5000000013300, 8, 7),
    (2718281828, 4242, 4242, 5000000013400, 5000000013600, 8, 9),
    (2718281828, 4242, 4242, 5000000022000, 5000000022200, 8, 11),
    (2718281828, 4242, 4242, 5000000024000, 5000000034000, 6, 13),
    (2718281828, 4242, 4242, 5000000024100, 5000000024300, 8, 14),
    (2718281828, 4242, 4242, 5000000024400, 5000000024600, 8, 16),
    (2718281828, 4242, 4242, 5000000033000, 5000000033200, 8, 18),
    (2718281828, 4242, 4242, 5000000040000, 5000000052000, 6, 20),
    (2718281828, 4242, 4250, 5000000040100, 5000000040300, 8, 21),
    (2718281828, 4242, 4250, 5000000040400, 5000000040600, 8, 23),
    (2718281828, 4242, 4242, 5000000052000, 5000000060000, 6, 25),
    (2718281828, 4242, 4250, 5000000052100, 5000000052300, 8, 26),
    (2718281828, 4242, 4242, 5000000061000, 5000000073000, 6, 28),
    (2718281828, 4242, 4250, 5000000061100, 5000000061300, 8, 29),
    (2718281828, 4242, 4250, 5000000061400, 5000000061600, 8, 31),
    (2718281828, 4242, 4242, 5000000074000, 5000000082000, 6, 33),
    (2718281828, 4242, 4250, 5000000074100, 5000000074300, 8, 34);
INSERT INTO "rocpd_track_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, nid, pid, tid, name_id) VALUES
    (1, 2718281828, 4242, 4242, 2);
INSERT INTO "rocpd_sample_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, track_id, timestamp, event_id) VALUES
    (102, 1, 5000000000500, 2);
INSERT INTO "rocpd_kernel_dispatch_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (id, nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, end, private_segment_size, group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id) VALUES
    (1, 2718281828, 4242, 4242, 1, 1, 1, 94371840, 0, 5000000014000, 5000000018000, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 8),
    (2, 2718281828, 4242, 4242, 1, 2, 2, 94371840, 0, 5000000018000, 5000000020000, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 10),
    (3, 2718281828, 4242, 4242, 1, 6, 3, 94372096, 0, 5000000022500, 5000000023500, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 12),
    (4, 2718281828, 4242, 4242, 1, 1, 4, 94371840, 0, 5000000025000, 5000000029000, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 15),
    (5, 2718281828, 4242, 4242, 1, 2, 5, 94371840, 0, 5000000029000, 5000000031000, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 17),
    (6, 2718281828, 4242, 4242, 1, 6, 6, 94372096, 0, 5000000033500, 5000000034500, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 19),
    (7, 2718281828, 4242, 4250, 1, 3, 7, 94371840, 0, 5000000041000, 5000000049000, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 22),
    (8, 2718281828, 4242, 4250, 1, 4, 8, 94371840, 0, 5000000049000, 5000000051000, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 24),
    (9, 2718281828, 4242, 4250, 1, 5, 9, 94371840, 0, 5000000053000, 5000000059000, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 27),
    (10, 2718281828, 4242, 4250, 1, 3, 10, 94371840, 0, 5000000062000, 5000000071000, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 30),
    (11, 2718281828, 4242, 4250, 1, 4, 11, 94371840, 0, 5000000071000, 5000000073000, 0, 16384, 256, 1, 1, 16384, 1, 1, 1, 32),
    (12, 2718281828, 4242, 4250, 1, 5, 12, 94371840, 0, 5000000075000, 5000000081500, 0, 16384, 256, 1, 1, 65536, 1, 1, 1, 35);
INSERT INTO "rocpd_memory_copy_0197c2a4_8e1b_7a3c_9d5e_4f60718293a4" (nid, pid, tid, start, end, name_id, dst_agent_id, dst_address, src_agent_id, src_address, size, queue_id, stream_id, region_name_id, event_id) VALUES
    (2718281828, 4242, 4242, 5000000002000, 5000000012000, 11, 1, 140010000000000, 0, 139990000000000, 1048576, NULL, 0, 1, 5);
