// kafkajs 2.2.4 against kafka-emu: `node kafkajs.mjs <scenario> [bootstrap]`.
// Scenarios: group (3 members split 6 partitions, one leaves), produce (1000 messages plain and
// gzip, consumed in order with keys/headers), resume (committed offsets survive the group),
// admin (create/delete topics and their errors). See lib.mjs for the output contract.
import { Kafka, logLevel, CompressionTypes } from 'kafkajs'
import { main, waitFor, within, isPartition, message, verify, sleep } from './lib.mjs'

const GROUP_OPTS = { sessionTimeout: 6000, heartbeatInterval: 500, rebalanceTimeout: 10000, maxWaitTimeInMs: 200 }

function kafka(bootstrap, clientId = 'kafka-emu-test') {
  return new Kafka({ clientId, brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } })
}

function decode(topic, partition, m) {
  const headers = {}
  for (const [k, v] of Object.entries(m.headers || {})) headers[k] = v.toString()
  return { topic, partition, offset: Number(m.offset), key: m.key && m.key.toString(), value: m.value.toString(), headers }
}

async function produce(client, topic, messages, compression = CompressionTypes.None) {
  const producer = client.producer()
  await producer.connect()
  for (let i = 0; i < messages.length; i += 100) {
    await producer.send({ topic, compression, messages: messages.slice(i, i + 100) })
  }
  await producer.disconnect()
}

async function group(bootstrap) {
  const topic = 'group-topic'
  const client = kafka(bootstrap)
  const members = []
  for (let i = 0; i < 3; i++) {
    const consumer = client.consumer({ groupId: 'js-group', ...GROUP_OPTS })
    const member = { consumer, id: null, partitions: [] }
    consumer.on(consumer.events.GROUP_JOIN, e => {
      member.id = e.payload.memberId
      member.partitions = (e.payload.memberAssignment[topic] || []).slice().sort((a, b) => a - b)
    })
    await consumer.connect()
    await consumer.subscribe({ topics: [topic] })
    await consumer.run({ eachMessage: async () => {} })
    members.push(member)
  }
  const snapshot = ms => Object.fromEntries(ms.map(m => [m.id, m.partitions]))
  const balanced = ms => ms.every(m => m.id && m.partitions.length > 0) && isPartition(snapshot(ms), 6)
  await waitFor('3 members to split 6 partitions', () => balanced(members))
  await sleep(500) // a late rebalance would show up as a changed assignment below
  await waitFor('assignment to stay balanced', () => balanced(members))
  const before = snapshot(members)
  const [leaver, ...rest] = members
  await within('disconnect', leaver.consumer.disconnect())
  await waitFor('2 members to take over 6 partitions', () => balanced(rest))
  const after = snapshot(rest)
  await Promise.all(rest.map(m => within('disconnect', m.consumer.disconnect())))
  return { group: 'js-group', before, leaver: leaver.id, leaver_partitions: before[leaver.id], after }
}

async function consumeAll(client, groupId, topics, expected, graceMs = 0) {
  const consumer = client.consumer({ groupId, ...GROUP_OPTS })
  const got = []
  await consumer.connect()
  await consumer.subscribe({ topics, fromBeginning: true })
  await consumer.run({ eachMessage: async ({ topic, partition, message: m }) => { got.push(decode(topic, partition, m)) } })
  await waitFor(`${expected} messages (have ${got.length})`, () => got.length >= expected, 20000)
  if (graceMs) await sleep(graceMs)
  await within('disconnect', consumer.disconnect())
  return got
}

async function produceScenario(bootstrap) {
  const client = kafka(bootstrap)
  const out = {}
  for (const [topic, compression] of [['plain', CompressionTypes.None], ['gzip', CompressionTypes.GZIP]]) {
    const produced = Array.from({ length: 1000 }, (_, i) => message(i, topic))
    await produce(client, topic, produced, compression)
    const consumed = await consumeAll(client, `js-produce-${topic}`, [topic], 1000, 300)
    out[topic] = verify(produced, consumed)
  }
  return out
}

async function resume(bootstrap) {
  const topic = 'resume'
  const client = kafka(bootstrap)
  const first = Array.from({ length: 20 }, (_, i) => message(i, 'first'))
  await produce(client, topic, first)

  const consumer = client.consumer({ groupId: 'js-resume', ...GROUP_OPTS })
  const seenFirst = []
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ topic: t, partition, message: m }) => {
      seenFirst.push(m.value.toString())
      await consumer.commitOffsets([{ topic: t, partition, offset: String(Number(m.offset) + 1) }])
    }
  })
  await waitFor('first 20 messages', () => seenFirst.length >= 20)
  await within('disconnect', consumer.disconnect())

  const admin = client.admin()
  await admin.connect()
  const committed = await admin.fetchOffsets({ groupId: 'js-resume', topics: [topic] })
  await admin.disconnect()

  const second = Array.from({ length: 5 }, (_, i) => message(100 + i, 'second'))
  await produce(client, topic, second)
  const seenSecond = (await consumeAll(client, 'js-resume', [topic], 5, 1000)).map(m => m.value)
  return {
    first: seenFirst.sort(),
    committed: Object.fromEntries(committed[0].partitions.map(p => [p.partition, Number(p.offset)])),
    second_produced: second.map(m => m.value).sort(),
    second_seen: seenSecond.sort()
  }
}

async function admin(bootstrap) {
  const client = new Kafka({ clientId: 'admin', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } })
  const a = client.admin()
  await a.connect()
  const out = {}
  out.created = await a.createTopics({ topics: [{ topic: 'admin-a', numPartitions: 3 }, { topic: 'admin-b', numPartitions: 1 }], waitForLeaders: true })
  out.created_again = await a.createTopics({ topics: [{ topic: 'admin-a', numPartitions: 3 }] })
  const meta = await a.fetchTopicMetadata({ topics: ['admin-a'] })
  out.partitions = meta.topics[0].partitions.length
  out.listed = (await a.listTopics()).filter(t => t.startsWith('admin-')).sort()
  await a.deleteTopics({ topics: ['admin-a'], timeout: 2000 })
  out.listed_after_delete = (await a.listTopics()).filter(t => t.startsWith('admin-')).sort()
  try {
    await a.deleteTopics({ topics: ['no-such-topic'], timeout: 2000 })
    out.delete_unknown_error = null
  } catch (e) {
    const inner = e.cause || e // kafkajs wraps the broker error in KafkaJSNumberOfRetriesExceeded
    out.delete_unknown_error = inner.type || inner.name
  }
  await a.disconnect()
  return out
}

await main({ group, produce: produceScenario, resume, admin })
