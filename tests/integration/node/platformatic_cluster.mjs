// @platformatic/kafka against a 3-broker kafka-emu: `node platformatic_cluster.mjs move <bootstrap
// list>`, with the control endpoint's base URL in $KAFKA_EMU_CONTROL. A group of three reads
// cluster-topic (created by the test, leaders spread over the brokers), its coordinator is moved
// over HTTP, more records are produced and the group must read every one. The result lists every
// value read (duplicates kept), the coordinator and generation before and after the move, and
// the group's state after it.
import './compat.mjs'
import { Consumer, Producer, stringSerializers, stringDeserializers } from '@platformatic/kafka'
import { main, waitFor, within, sleep, controlOk as control, controlRequest } from './lib.mjs'

const TOPIC = 'cluster-topic'
const GROUP = 'plt-cluster'
const PER_PHASE = 150
const GROUP_OPTS = { sessionTimeout: 30000, heartbeatInterval: 500, rebalanceTimeout: 30000 }

async function stable() {
  const { status, body } = await controlRequest('GET', `/groups/${GROUP}`)
  if (status !== 200) return false  // no member has joined yet
  const view = body.result
  return view.state === 'Stable' && view.members.length === 3
}

async function move(bootstrap) {
  const bootstrapBrokers = bootstrap.split(',')
  const got = []
  const errors = []
  const consumers = []
  for (let i = 0; i < 3; i++) {
    const c = new Consumer({ groupId: GROUP, clientId: `plt-cluster-${i}`, bootstrapBrokers,
                             deserializers: stringDeserializers, maxWaitTime: 100, retries: 20,
                             retryDelay: 200, ...GROUP_OPTS })
    c.on('error', e => errors.push(String(e && e.message)))
    const stream = await c.consume({ topics: [TOPIC], mode: 'committed', fallbackMode: 'earliest',
                                     autocommit: 200, ...GROUP_OPTS })
    stream.on('data', m => got.push(Number(m.value)))
    stream.on('error', e => errors.push(String(e && e.message)))
    consumers.push(c)
  }
  const producer = new Producer({ clientId: 'plt-cluster-producer', bootstrapBrokers, serializers: stringSerializers,
                                  idempotent: true, retries: 20, retryDelay: 200 })
  let produced = 0
  const produce = async n => {
    const messages = Array.from({ length: n }, (_, i) => ({ topic: TOPIC, key: `k${produced + i}`, value: String(produced + i) }))
    for (let i = 0; i < n; i += 50) await producer.send({ messages: messages.slice(i, i + 50), acks: -1 })
    produced += n
  }
  const allRead = what => waitFor(`${what}: ${produced} records (have ${new Set(got).size}; errors ${JSON.stringify(errors.slice(0, 5))})`,
                                  () => new Set(got).size >= produced, 40000)
  // produce only once the group has settled: records read while members still join one by one
  // are read again by whoever gets their partition (at-least-once, on Kafka as well)
  await waitFor('a stable group of three', stable, 30000)
  await sleep(500)
  await waitFor('a stable group of three', stable, 30000)
  await produce(PER_PHASE)
  await allRead('before the move')
  const duplicatesBefore = got.length - new Set(got).size
  const generationBefore = (await control('GET', `/groups/${GROUP}`)).generation
  const coordinatorBefore = (await control('GET', `/groups/${GROUP}/coordinator`)).coordinator
  const target = coordinatorBefore % 3 + 1
  await control('POST', `/groups/${GROUP}/move-coordinator`, { to: target, load_ms: 300 })
  await produce(PER_PHASE)
  await allRead('after the move')
  await sleep(1500)  // heartbeats and commits against the new coordinator; a record read twice shows up
  const after = await control('GET', `/groups/${GROUP}`)
  const coordinatorAfter = (await control('GET', `/groups/${GROUP}/coordinator`)).coordinator
  await within('producer close', producer.close())
  await Promise.all(consumers.map(c => within('consumer close', c.close(true), 20000)))
  return { produced, seen: got, target, coordinator: [coordinatorBefore, coordinatorAfter],
           generation: [generationBefore, after.generation], state_after: after.state,
           members_after: after.members.length, duplicates_before_move: duplicatesBefore, errors: errors.slice(0, 20) }
}

await main({ move })
