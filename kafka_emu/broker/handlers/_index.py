"""GENERATED from the handler modules in this package by `python -m kafka_emu.indexes`: do not edit.

key -> (module, the versions its handler serves: its own range within the declared one), so that
a process imports only the handlers it uses (see __init__.py)."""

INDEX: dict[int, tuple[str, str]] = {
    0: ('produce', '3-12'),
    1: ('fetch', '4-17'),
    2: ('list_offsets', '1-10'),
    3: ('metadata', '0-13'),
    8: ('offset_commit', '2-9'),
    9: ('offset_fetch', '1-9'),
    10: ('find_coordinator', '0-6'),
    11: ('join_group', '0-9'),
    12: ('heartbeat', '0-4'),
    13: ('leave_group', '0-5'),
    14: ('sync_group', '0-5'),
    15: ('describe_groups', '0-6'),
    16: ('list_groups', '0-5'),
    18: ('api_versions', '0-4'),
    19: ('create_topics', '2-7'),
    20: ('delete_topics', '1-6'),
    21: ('delete_records', '0-2'),
    22: ('init_producer_id', '0-5'),
    23: ('offset_for_leader_epoch', '2-4'),
    32: ('describe_configs', '1-4'),
    33: ('alter_configs', '0-2'),
    35: ('describe_log_dirs', '1-4'),
    37: ('create_partitions', '0-3'),
    42: ('delete_groups', '0-2'),
    43: ('elect_leaders', '0-2'),
    44: ('incremental_alter_configs', '0-1'),
    47: ('offset_delete', '0'),
    60: ('describe_cluster', '0-1'),
    68: ('consumer_group_heartbeat', '0-1'),
    69: ('consumer_group_describe', '0-1'),
    75: ('describe_topic_partitions', '0'),
}
