// kafkajs against a 3-broker kafka-emu: `node cluster.mjs <scenario> <bootstrap list>`, with the
// control endpoint's base URL in $KAFKA_EMU_CONTROL. Scenario `move`: a group of two consumes,
// its coordinator is moved over HTTP, more records are produced and the group must read every
// one; `moves` then also stops and starts every broker in turn. The result counts records read,
// distinct values, GROUP_JOIN events after the first two (kafkajs rejoins on NOT_COORDINATOR)
// and duplicates after each step.
import { Kafka, logLevel } from 'kafkajs'
import { main, waitFor, within, sleep, controlOk as ok } from './lib.mjs'

const PARTITIONS = 6  // of cluster-topic, created by the test

async function run(bootstrap, bounce) {
  const topic = 'cluster-topic'
  const groupId = 'js-cluster'
  const client = new Kafka({ clientId: 'js-cluster', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING,
                             retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } })
  const got = []
  const joins = []
  const crashes = []
  const consumers = []
  for (let i = 0; i < 2; i++) {
    const consumer = client.consumer({ groupId, sessionTimeout: 30000, heartbeatInterval: 500, maxWaitTimeInMs: 100 })
    consumer.on(consumer.events.GROUP_JOIN, e => joins.push(e.payload.memberId))
    consumer.on(consumer.events.CRASH, e => crashes.push(String(e.payload.error && e.payload.error.message)))
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({ eachMessage: async ({ message }) => { got.push(message.value.toString()) } })
    consumers.push(consumer)
  }
  const producer = client.producer({ idempotent: process.env.JS_IDEMPOTENT !== '0' })
  await producer.connect()
  let produced = 0
  // One send() per partition. kafkajs 2.2.4 keeps the answers of one send() across its retries
  // per broker: when a leader stops mid-send, the retry re-groups the records by the new
  // leaders and skips every broker that already answered, so the records of a partition that
  // moved to such a broker are never sent and send() still resolves (kafkajs issue #1303, PR
  // #1798; it happens against Kafka the same way). A send() to one partition's leader is
  // retried whole, with the same sequence numbers, so nothing is lost or written twice.
  const produce = async n => {
    const perPartition = new Map()
    for (let i = 0; i < n; i++) {
      const partition = (produced + i) % PARTITIONS
      if (!perPartition.has(partition)) perPartition.set(partition, [])
      perPartition.get(partition).push({ partition, value: `v${produced + i}` })
    }
    for (const messages of perPartition.values()) await producer.send({ topic, acks: -1, messages })
    produced += n
  }
  const phases = []
  const note = name => phases.push([name, got.length - new Set(got).size])
  const allRead = () => waitFor(`${produced} records (have ${new Set(got).size}; crashes ${JSON.stringify(crashes)})`, () => new Set(got).size >= produced, 30000)
  await produce(50)
  await allRead()
  await waitFor('both members joined once', () => joins.length >= 2)
  const joinsBefore = joins.length
  const coordinator = (await ok('GET', `/groups/${groupId}/coordinator`)).coordinator
  await ok('POST', `/groups/${groupId}/move-coordinator`, { to: coordinator % 3 + 1, load_ms: 300 })
  await produce(50)
  await allRead()
  note('move')
  for (const node of bounce ? [1, 2, 3] : []) {
    await ok('POST', `/brokers/${node}/stop`)
    await produce(20)
    await sleep(300)
    await ok('POST', `/brokers/${node}/start`)
    await allRead()
    note(`bounce ${node}`)
  }
  await sleep(1000)  // heartbeats against the final coordinator
  await within('producer disconnect', producer.disconnect())
  await Promise.all(consumers.map(c => within('consumer disconnect', c.disconnect(), 20000)))
  return { produced, read: got.length, distinct: new Set(got).size, rejoins: joins.length - joinsBefore, duplicates: phases, crashes }
}

await main({ move: b => run(b, false), moves: b => run(b, true) })
