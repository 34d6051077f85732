// @platformatic/kafka 2.x against kafka-emu: `node platformatic.mjs <scenario> [bootstrap]`.
// Same scenarios as kafkajs.mjs. This client only speaks recent API versions (ApiVersions v3-4,
// FindCoordinator v4-6, JoinGroup v6-9, OffsetFetch v8-9, Fetch v12+, Produce v9+), so it
// exercises the flexible (tagged-field) encodings of every API it touches.
import './compat.mjs'
import { Admin, Consumer, Producer, stringSerializers, stringDeserializers } from '@platformatic/kafka'
import { main, waitFor, within, isPartition, message, verify, sleep } from './lib.mjs'

const GROUP_OPTS = { sessionTimeout: 6000, heartbeatInterval: 500, rebalanceTimeout: 10000 }

function consumer(bootstrap, groupId) {
  return new Consumer({
    groupId, clientId: 'kafka-emu-test', bootstrapBrokers: [bootstrap], deserializers: stringDeserializers,
    maxWaitTime: 200, retries: 3, retryDelay: 100, ...GROUP_OPTS
  })
}

async function produce(bootstrap, messages, compression) {
  const producer = new Producer({ clientId: 'kafka-emu-test', bootstrapBrokers: [bootstrap], serializers: stringSerializers, retries: 3, retryDelay: 100 })
  try {
    for (let i = 0; i < messages.length; i += 100) {
      await producer.send({ messages: messages.slice(i, i + 100), ...(compression ? { compression } : {}) })
    }
  } finally {
    await within('producer close', producer.close())
  }
}

function decode(m) {
  return { topic: m.topic, partition: m.partition, offset: Number(m.offset), key: m.key, value: m.value, headers: Object.fromEntries(m.headers) }
}

async function group(bootstrap) {
  const topic = 'group-topic'
  const members = []
  for (let i = 0; i < 3; i++) {
    const c = consumer(bootstrap, 'plt-group')
    const stream = await c.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest', ...GROUP_OPTS })
    stream.on('data', () => {})
    members.push({ c, stream })
  }
  const snapshot = ms => Object.fromEntries(ms.map(({ c }) => [c.memberId,
    (c.assignments || []).filter(a => a.topic === topic).flatMap(a => a.partitions).sort((x, y) => x - y)]))
  const balanced = ms => {
    const s = snapshot(ms)
    return ms.every(({ c }) => c.memberId) && Object.values(s).every(p => p.length > 0) &&
      new Set(ms.map(({ c }) => c.generationId)).size === 1 && isPartition(s, 6)
  }
  await waitFor('3 members to split 6 partitions', () => balanced(members))
  await sleep(500)
  await waitFor('assignment to stay balanced', () => balanced(members))
  const before = snapshot(members)
  const [leaver, ...rest] = members
  const leaverId = leaver.c.memberId
  await within('leaver close', leaver.c.close(true))
  await waitFor('2 members to take over 6 partitions', () => balanced(rest))
  const after = snapshot(rest)
  await Promise.all(rest.map(({ c }) => within('close', c.close(true))))
  return { group: 'plt-group', before, leaver: leaverId, leaver_partitions: before[leaverId], after }
}

async function consumeAll(bootstrap, groupId, topics, expected, graceMs = 0) {
  const c = consumer(bootstrap, groupId)
  const got = []
  try {
    const stream = await c.consume({ topics, mode: 'committed', fallbackMode: 'earliest', autocommit: 100, ...GROUP_OPTS })
    stream.on('data', m => got.push(decode(m)))
    await waitFor(`${expected} messages (have ${got.length})`, () => got.length >= expected, 20000)
    if (graceMs) await sleep(graceMs)
  } finally {
    await within('consumer close', c.close(true))
  }
  return got
}

async function produceScenario(bootstrap) {
  const out = {}
  for (const [topic, compression] of [['plain', undefined], ['gzip', 'gzip'], ['lz4', 'lz4'], ['snappy', 'snappy']]) {
    const produced = Array.from({ length: 1000 }, (_, i) => ({ topic, ...message(i, topic) }))
    await produce(bootstrap, produced, compression)
    const consumed = await consumeAll(bootstrap, `plt-produce-${topic}`, [topic], 1000, 300)
    out[topic] = verify(produced, consumed)
  }
  return out
}

async function resume(bootstrap) {
  const topic = 'resume'
  const first = Array.from({ length: 20 }, (_, i) => ({ topic, ...message(i, 'first') }))
  await produce(bootstrap, first)

  const c = consumer(bootstrap, 'plt-resume')
  const seenFirst = []
  const stream = await c.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest', autocommit: false, ...GROUP_OPTS })
  stream.on('data', m => { seenFirst.push(m); })
  await waitFor('first 20 messages', () => seenFirst.length >= 20)
  // Commit explicitly (offset + 1 of the last message of each partition), then leave.
  const last = new Map()
  for (const m of seenFirst) last.set(m.partition, m)
  await c.commit({ offsets: [...last.values()].map(m => ({ topic, partition: m.partition, offset: m.offset + 1n, leaderEpoch: m.leaderEpoch ?? -1 })) })
  const committed = await c.listCommittedOffsets({ topics: [{ topic, partitions: [0, 1] }] })
  await within('close', c.close(true))

  const second = Array.from({ length: 5 }, (_, i) => ({ topic, ...message(100 + i, 'second') }))
  await produce(bootstrap, second)
  const seenSecond = (await consumeAll(bootstrap, 'plt-resume', [topic], 5, 1000)).map(m => m.value)
  return {
    first: seenFirst.map(m => m.value).sort(),
    committed: Object.fromEntries((committed.get(topic) || []).map((o, p) => [p, Number(o)])),
    second_produced: second.map(m => m.value).sort(),
    second_seen: seenSecond.sort()
  }
}

async function admin(bootstrap) {
  const a = new Admin({ clientId: 'admin', bootstrapBrokers: [bootstrap], retries: 0 })
  const out = {}
  try {
    const created = await a.createTopics({ topics: ['admin-a', 'admin-b'], partitions: 3, replicas: 1 })
    out.created = created.map(t => [t.name, t.partitions]).sort()
    try {
      await a.createTopics({ topics: ['admin-a'], partitions: 3, replicas: 1 })
      out.create_again_error = null
    } catch (e) {
      out.create_again_error = errorNames(e)
    }
    const meta = await a.metadata({ topics: ['admin-a'] })
    out.partitions = meta.topics.get('admin-a').partitionsCount
    out.listed = (await a.listTopics()).filter(t => t.startsWith('admin-')).sort()
    await a.deleteTopics({ topics: ['admin-a'] })
    out.listed_after_delete = (await a.listTopics()).filter(t => t.startsWith('admin-')).sort()
    try {
      await a.deleteTopics({ topics: ['no-such-topic'] })
      out.delete_unknown_error = null
    } catch (e) {
      out.delete_unknown_error = errorNames(e)
    }
  } finally {
    await within('admin close', a.close())
  }
  return out
}

// The broker error codes/names inside a (possibly nested) platformatic error.
function errorNames(e) {
  const names = new Set()
  const walk = (x, depth = 0) => {
    if (!x || depth > 5) return
    if (x.apiId) names.add(x.apiId)
    if (x.response && x.response.errorCode) names.add(`code:${x.response.errorCode}`)
    for (const sub of x.errors || []) walk(sub, depth + 1)
    if (x.cause) walk(x.cause, depth + 1)
  }
  walk(e)
  return names.size ? [...names].sort() : [String(e.code || e.message)]
}

// The consumer group protocol (KIP-848): groupProtocol 'consumer' sends ConsumerGroupHeartbeat and
// takes the broker's assignment; no partition may be owned by two members at any moment.
async function group848(bootstrap) {
  const topic = 'group-topic'
  const members = []
  let overlaps = 0
  for (let i = 0; i < 3; i++) {
    const c = new Consumer({
      groupId: 'plt-group-848', clientId: 'kafka-emu-test', bootstrapBrokers: [bootstrap],
      deserializers: stringDeserializers, maxWaitTime: 200, retries: 3, retryDelay: 100,
      groupProtocol: 'consumer', ...GROUP_OPTS
    })
    const stream = await c.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest', groupProtocol: 'consumer', ...GROUP_OPTS })
    stream.on('data', () => {})
    members.push({ c, stream })
  }
  const snapshot = ms => Object.fromEntries(ms.map(({ c }) => [c.memberId,
    (c.assignments || []).filter(a => a.topic === topic).flatMap(a => a.partitions).sort((x, y) => x - y)]))
  const settled = ms => {
    const s = snapshot(ms)
    const all = Object.values(s).flat()
    if (new Set(all).size !== all.length) overlaps++
    return ms.every(({ c }) => c.memberId) && Object.values(s).every(p => p.length > 0) && isPartition(s, 6)
  }
  await waitFor('3 KIP-848 members to split 6 partitions', () => settled(members))
  const before = snapshot(members)
  const [leaver, ...rest] = members
  const leaverId = leaver.c.memberId
  await within('leaver close', leaver.c.close(true))
  await waitFor('2 members to take over 6 partitions', () => settled(rest))
  const after = snapshot(rest)
  await Promise.all(rest.map(({ c }) => within('close', c.close(true))))
  return { group: 'plt-group-848', before, leaver: leaverId, after, overlaps }
}

await main({ group, group848, produce: produceScenario, resume, admin })
