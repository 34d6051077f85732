"""GENERATED from the declarations in this package by `python -m kafka_emu.indexes`: do not edit.

key -> (name, module, valid versions, flexible versions) of every declared API, so that a process
imports only the declarations it uses (see ../registry.py)."""

INDEX: dict[int, tuple[str, str, str, str]] = {
    0: ('Produce', 'produce', '3-12', '9+'),
    1: ('Fetch', 'fetch', '4-17', '12+'),
    2: ('ListOffsets', 'list_offsets', '1-10', '6+'),
    3: ('Metadata', 'metadata', '0-13', '9+'),
    8: ('OffsetCommit', 'offset_commit', '0-9', '8+'),
    9: ('OffsetFetch', 'offset_fetch', '0-9', '6+'),
    10: ('FindCoordinator', 'find_coordinator', '0-6', '3+'),
    11: ('JoinGroup', 'join_group', '0-9', '6+'),
    12: ('Heartbeat', 'heartbeat', '0-4', '4+'),
    13: ('LeaveGroup', 'leave_group', '0-5', '4+'),
    14: ('SyncGroup', 'sync_group', '0-5', '4+'),
    15: ('DescribeGroups', 'describe_groups', '0-6', '5+'),
    16: ('ListGroups', 'list_groups', '0-5', '3+'),
    18: ('ApiVersions', 'api_versions', '0-4', '3+'),
    19: ('CreateTopics', 'create_topics', '0-7', '5+'),
    20: ('DeleteTopics', 'delete_topics', '0-6', '4+'),
    21: ('DeleteRecords', 'delete_records', '0-2', '2+'),
    22: ('InitProducerId', 'init_producer_id', '0-5', '2+'),
    23: ('OffsetForLeaderEpoch', 'offset_for_leader_epoch', '2-4', '4+'),
    32: ('DescribeConfigs', 'describe_configs', '0-4', '4+'),
    33: ('AlterConfigs', 'alter_configs', '0-2', '2+'),
    35: ('DescribeLogDirs', 'describe_log_dirs', '1-4', '2+'),
    37: ('CreatePartitions', 'create_partitions', '0-3', '2+'),
    42: ('DeleteGroups', 'delete_groups', '0-2', '2+'),
    43: ('ElectLeaders', 'elect_leaders', '0-2', '2+'),
    44: ('IncrementalAlterConfigs', 'incremental_alter_configs', '0-1', '1+'),
    47: ('OffsetDelete', 'offset_delete', '0', 'none'),
    60: ('DescribeCluster', 'describe_cluster', '0-1', '0+'),
    68: ('ConsumerGroupHeartbeat', 'consumer_group_heartbeat', '0-1', '0+'),
    69: ('ConsumerGroupDescribe', 'consumer_group_describe', '0-1', '0+'),
    75: ('DescribeTopicPartitions', 'describe_topic_partitions', '0', '0+'),
}
