"""Watch (broker/topics.py), the wait of a long-polling Fetch: an append wakes it by cancelling
its scope, or -- where its connection reads a stdlib socket meanwhile (``Watch.socket``) -- by
``notify_closing`` on that socket, which ends the read with ClosedResourceError and leaves the
socket open; the deadline is the first wait's for every later one."""

import socket

import trio
import trio.testing

from kafka_emu.broker.config import BrokerConfig
from kafka_emu.broker.topics import Topics


async def test_an_append_wakes_a_watch_waiting_on_its_socket_and_the_socket_stays_usable():
    topics = Topics(BrokerConfig(topics=(("t", 2),)))
    log, other = (topics.partition("t", i) for i in range(2))
    watch = topics.watch([log], 10.0)
    a, b = socket.socketpair()
    a.setblocking(False)
    outcome = {}

    async def parked():
        with watch.scope():
            watch.socket = a
            try:
                await trio.lowlevel.wait_readable(a)
            except trio.ClosedResourceError:
                outcome["woken"] = watch.woken
            finally:
                watch.socket = None

    with trio.fail_after(5):  # (not woken: the read would wait on forever)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(parked)
            await trio.testing.wait_all_tasks_blocked()
            topics.notify_append([other])  # another partition's append: still waiting
            await trio.testing.wait_all_tasks_blocked()
            assert outcome == {}
            topics.notify_append([log])
    assert outcome == {"woken": True}
    b.send(b"x")  # the socket was not closed: it is read as before
    await trio.lowlevel.wait_readable(a)
    assert a.recv(1) == b"x"
    topics.unwatch(watch)
    assert topics._watches == {}
    a.close()
    b.close()


async def test_every_wait_of_a_watch_ends_at_the_first_waits_deadline(autojump_clock):
    topics = Topics(BrokerConfig(topics=(("t", 1),)))
    watch = topics.watch([topics.partition("t", 0)], 3.0)
    start = trio.current_time()
    await trio.sleep(1)
    with watch.scope():
        await trio.sleep_forever()
    assert trio.current_time() - start == 4.0  # 3 s from the first wait, which began at 1 s
    with watch.scope():
        await trio.sleep_forever()
    assert trio.current_time() - start == 4.0  # the same deadline, already past
    await trio.sleep(0)
