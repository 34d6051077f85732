"""librdkafka's mock cluster, shared by several clients: the peer the broker benchmarks measure.

``test.mock.num.brokers`` makes a mock cluster private to one client; to let a producer and
three consumers share one, we create it through librdkafka's C mock API (rdkafka_mock.h) with
ctypes, on the librdkafka shared library bundled in the confluent-kafka wheel, so the peer is
the very librdkafka the clients run. The mock runs on its own threads inside a throwaway
producer handle; ``bootstrap_servers`` is what clients connect to.

    with MockCluster(brokers=1, topics={"t": 3}, initial_rebalance_delay_ms=0) as mock:
        Consumer({"bootstrap.servers": mock.bootstrap_servers, ...})
"""

from __future__ import annotations

import ctypes
import glob
import os

import confluent_kafka

RD_KAFKA_PRODUCER = 0


def _find_library() -> str:
    """The librdkafka confluent-kafka itself loads (bundled wheel copy first, then system)."""
    package = os.path.dirname(confluent_kafka.__file__)
    for pattern in (os.path.join(package, os.pardir, "confluent_kafka.libs", "librdkafka*.so*"),
                    os.path.join(package, "librdkafka*.so*"),
                    os.path.join(package, ".libs", "librdkafka*.so*")):
        found = sorted(glob.glob(pattern))
        if found:
            return os.path.realpath(found[0])
    import ctypes.util
    name = ctypes.util.find_library("rdkafka")
    if name is None:
        raise OSError("librdkafka shared library not found next to confluent_kafka")
    return name


def _load() -> ctypes.CDLL:
    lib = ctypes.CDLL(_find_library())
    vp, cp, i32 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32
    lib.rd_kafka_conf_new.argtypes, lib.rd_kafka_conf_new.restype = [], vp
    lib.rd_kafka_conf_set.argtypes = [vp, cp, cp, cp, ctypes.c_size_t]
    lib.rd_kafka_conf_set.restype = ctypes.c_int
    lib.rd_kafka_conf_destroy.argtypes, lib.rd_kafka_conf_destroy.restype = [vp], None
    lib.rd_kafka_new.argtypes = [ctypes.c_int, vp, cp, ctypes.c_size_t]
    lib.rd_kafka_new.restype = vp
    lib.rd_kafka_destroy.argtypes, lib.rd_kafka_destroy.restype = [vp], None
    lib.rd_kafka_mock_cluster_new.argtypes = [vp, ctypes.c_int]
    lib.rd_kafka_mock_cluster_new.restype = vp
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [vp]
    lib.rd_kafka_mock_cluster_bootstraps.restype = cp
    lib.rd_kafka_mock_cluster_destroy.argtypes = [vp]
    lib.rd_kafka_mock_cluster_destroy.restype = None
    lib.rd_kafka_mock_topic_create.argtypes = [vp, cp, ctypes.c_int, ctypes.c_int]
    lib.rd_kafka_mock_topic_create.restype = ctypes.c_int
    lib.rd_kafka_err2str.argtypes, lib.rd_kafka_err2str.restype = [ctypes.c_int], cp
    lib.rd_kafka_version_str.argtypes, lib.rd_kafka_version_str.restype = [], cp
    if hasattr(lib, "rd_kafka_mock_group_initial_rebalance_delay_ms"):
        fn = lib.rd_kafka_mock_group_initial_rebalance_delay_ms
        fn.argtypes, fn.restype = [vp, i32], None
    return lib


class MockCluster:
    """A librdkafka mock cluster owned by this object; use as a context manager."""

    def __init__(self, *, brokers: int = 1, topics: dict[str, int] | None = None,
                 initial_rebalance_delay_ms: int | None = None) -> None:
        self._lib = lib = _load()
        errstr = ctypes.create_string_buffer(512)
        conf = lib.rd_kafka_conf_new()
        # Keep the owning handle quiet: it never talks to a broker of its own.
        lib.rd_kafka_conf_set(conf, b"log_level", b"3", errstr, len(errstr))
        self._rk = lib.rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, len(errstr))
        if not self._rk:
            lib.rd_kafka_conf_destroy(conf)
            raise RuntimeError(f"rd_kafka_new failed: {errstr.value.decode()}")
        self._mcluster = lib.rd_kafka_mock_cluster_new(self._rk, brokers)
        if not self._mcluster:
            lib.rd_kafka_destroy(self._rk)
            raise RuntimeError("rd_kafka_mock_cluster_new failed")
        self.bootstrap_servers = lib.rd_kafka_mock_cluster_bootstraps(self._mcluster).decode()
        self.version = lib.rd_kafka_version_str().decode()
        if initial_rebalance_delay_ms is not None:
            lib.rd_kafka_mock_group_initial_rebalance_delay_ms(self._mcluster,
                                                               initial_rebalance_delay_ms)
        for name, partitions in (topics or {}).items():
            self.create_topic(name, partitions)

    def create_topic(self, name: str, partitions: int, replication_factor: int = 1) -> None:
        err = self._lib.rd_kafka_mock_topic_create(self._mcluster, name.encode(), partitions,
                                                   replication_factor)
        if err:
            raise RuntimeError(f"mock topic {name!r}: {self._lib.rd_kafka_err2str(err).decode()}")

    def close(self) -> None:
        if self._mcluster:
            self._lib.rd_kafka_mock_cluster_destroy(self._mcluster)
            self._mcluster = None
        if self._rk:
            self._lib.rd_kafka_destroy(self._rk)
            self._rk = None

    def __enter__(self) -> MockCluster:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
