// Verifiable consumer/producer on kafkajs (2.x), speaking Kafka's VerifiableConsumer contract.
//
//   node kafkajs_verifiable.mjs --consumer --topic T --group-id G --bootstrap-server HOST:PORT ...
//
// kafka-emu's conformance kit copies this file next to a node_modules holding kafkajs (see
// clients/node.py) and runs it. A real consumer loop: consumer.run with eachBatch, the offsets of
// each batch committed with commitOffsets unless --enable-autocommit. kafkajs has no
// onPartitionsRevoked/Assigned callbacks; its rebalance events are the listener: REBALANCING
// (the member is about to rejoin: its partitions are revoked) and GROUP_JOIN (the new
// assignment). kafkajs has no static membership (group.instance.id): --group-instance-id is
// refused with exit code 2, and only the round-robin assignor exists (other names fall back to
// it, said on stderr).
import { Kafka, logLevel, PartitionAssigners } from 'kafkajs'
import { readFileSync } from 'node:fs'

function log (msg) { process.stderr.write(`${new Date().toISOString()} ${msg}\n`) }
function emit (name, fields = {}) {
  process.stdout.write(JSON.stringify({ timestamp: Date.now(), name, ...fields }) + '\n')
}

function parseArgs (argv) {
  const a = { mode: 'consumer', maxMessages: -1, sessionTimeout: 30000, autocommit: false, resetPolicy: 'earliest', throughput: -1, acks: -1 }
  const valued = {
    '--topic': v => { a.topic = v },
    '--bootstrap-server': v => { a.bootstrap = v },
    '--broker-list': v => { a.bootstrap = v },
    '--group-id': v => { a.groupId = v },
    '--group-instance-id': v => { a.instanceId = v },
    '--session-timeout': v => { a.sessionTimeout = Number(v) },
    '--max-messages': v => { a.maxMessages = Number(v) },
    '--assignment-strategy': v => { a.strategy = v },
    '--reset-policy': v => { a.resetPolicy = v },
    '--consumer.config': v => { a.config = v },
    '--producer.config': v => { a.config = v },
    '--throughput': v => { a.throughput = Number(v) },
    '--acks': v => { a.acks = Number(v) },
    '--value-prefix': v => { a.valuePrefix = v },
    '--group-protocol': v => { if (v !== 'classic') { log(`unsupported group protocol ${v}`); process.exit(2) } }
  }
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]
    if (name === '--consumer' || name === '--producer') a.mode = name.slice(2)
    else if (name === '--enable-autocommit') a.autocommit = true
    else if (name === '--verbose') a.verbose = true
    else if (valued[name] && i + 1 < argv.length) valued[name](argv[++i])
    else { log(`unknown option or missing value: ${name}`); process.exit(2) }
  }
  if (!a.topic || !a.bootstrap) { log('--topic and --bootstrap-server/--broker-list are required'); process.exit(2) }
  a.props = {}
  if (a.config) {
    for (const raw of readFileSync(a.config, 'utf8').split('\n')) {
      const line = raw.trim()
      if (!line || line[0] === '#' || line[0] === '!') continue
      const eq = line.indexOf('=')
      if (eq > 0) a.props[line.slice(0, eq).trim()] = line.slice(eq + 1).trim()
    }
  }
  return a
}

function client (a) {
  return new Kafka({
    clientId: a.props['client.id'] || 'kafkajs-verifiable',
    brokers: a.bootstrap.split(','),
    logLevel: logLevel.ERROR,
    logCreator: () => ({ level, log: entry }) => log(`kafkajs ${entry.message}`),
    retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 1000 }
  })
}

const tpList = assignment => Object.entries(assignment).flatMap(([topic, ps]) => ps.map(partition => ({ topic, partition })))
  .sort((x, y) => (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : x.partition - y.partition))

async function consumer (a) {
  if (a.instanceId) { log('kafkajs has no static membership (group.instance.id)'); process.exit(2) }
  if (a.strategy && !/roundrobin/i.test(a.strategy)) log(`kafkajs has only the round-robin assignor; ignoring ${a.strategy}`)
  const num = (k, d) => (a.props[k] !== undefined ? Number(a.props[k]) : d)
  const c = client(a).consumer({
    groupId: a.groupId,
    sessionTimeout: a.sessionTimeout,
    heartbeatInterval: num('heartbeat.interval.ms', 3000),
    rebalanceTimeout: num('max.poll.interval.ms', 60000),
    maxWaitTimeInMs: num('fetch.max.wait.ms', 100),
    partitionAssigners: [PartitionAssigners.roundRobin]
  })
  let assigned = null // null until the first GROUP_JOIN
  let consumed = 0
  let stopping = false
  const revoke = () => {
    if (assigned !== null) emit('partitions_revoked', { partitions: assigned })
    assigned = null
  }
  c.on(c.events.REBALANCING, revoke)
  c.on(c.events.GROUP_JOIN, e => {
    revoke() // a rejoin kafkajs did without a REBALANCING event still replaces the assignment
    assigned = tpList(e.payload.memberAssignment || {})
    emit('partitions_assigned', { partitions: assigned })
  })
  const shutdown = async () => {
    if (stopping) return
    stopping = true
    try { await c.disconnect() } catch (err) { log(`disconnect failed: ${err}`) }
    emit('shutdown_complete')
    process.exit(0)
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
  c.on(c.events.CRASH, e => { log(`consumer crashed: ${e.payload.error}`); if (!e.payload.restart) shutdown() })

  emit('startup_complete')
  await c.connect()
  await c.subscribe({ topics: [a.topic], fromBeginning: a.resetPolicy !== 'latest' })
  await c.run({
    autoCommit: a.autocommit,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, isRunning, isStale }) => {
      if (stopping || !isRunning() || isStale() || batch.messages.length === 0) return
      let offsets = batch.messages.map(m => Number(m.offset))
      if (a.maxMessages >= 0) offsets = offsets.slice(0, Math.max(0, a.maxMessages - consumed))
      if (offsets.length === 0) return
      const min = offsets[0]
      const max = offsets[offsets.length - 1]
      emit('records_consumed', { count: offsets.length, partitions: [{ topic: batch.topic, partition: batch.partition, count: offsets.length, minOffset: min, maxOffset: max }] })
      consumed += offsets.length
      resolveOffset(String(max))
      if (!a.autocommit) {
        const entry = { topic: batch.topic, partition: batch.partition, offset: max + 1 }
        try {
          await c.commitOffsets([{ ...entry, offset: String(max + 1) }])
          emit('offsets_committed', { offsets: [entry], success: true })
        } catch (err) {
          emit('offsets_committed', { offsets: [{ ...entry, error: String(err.type || err.name) }], success: false, error: String(err.message || err) })
        }
      }
      if (a.maxMessages >= 0 && consumed >= a.maxMessages) setImmediate(shutdown)
    }
  })
}

async function producer (a) {
  const kafka = client(a)
  const p = kafka.producer({ allowAutoTopicCreation: true })
  const admin = kafka.admin()
  await Promise.all([p.connect(), admin.connect()])
  let stopping = false
  process.on('SIGTERM', () => { stopping = true })
  process.on('SIGINT', () => { stopping = true })
  let meta
  try {
    meta = await admin.fetchTopicMetadata({ topics: [a.topic] })
  } catch (err) { // an unknown topic: create it with the broker's defaults, as auto-creation would
    await admin.createTopics({ topics: [{ topic: a.topic }], waitForLeaders: true })
    meta = await admin.fetchTopicMetadata({ topics: [a.topic] })
  }
  const partitions = meta.topics[0].partitions.map(x => x.partitionId).sort((x, y) => x - y)
  await admin.disconnect()
  emit('startup_complete')
  const prefix = a.valuePrefix !== undefined ? `${a.valuePrefix}.` : ''
  const total = a.maxMessages < 0 ? Infinity : a.maxMessages
  const chunk = a.throughput > 0 ? Math.max(1, Math.floor(a.throughput / 10)) : 100
  const acks = a.acks === -1 ? -1 : a.acks
  for (let i = 0; i < total && !stopping;) {
    const perPartition = new Map()
    for (let n = 0; n < chunk && i < total; n++, i++) {
      const partition = partitions[i % partitions.length]
      if (!perPartition.has(partition)) perPartition.set(partition, [])
      perPartition.get(partition).push(`${prefix}${i}`)
    }
    await Promise.all([...perPartition.entries()].map(async ([partition, values]) => {
      try {
        const [md] = await p.send({ topic: a.topic, acks, messages: values.map(value => ({ value, partition })) })
        values.forEach((value, k) => emit('producer_send_success', { key: null, value, topic: a.topic, partition, offset: Number(md.baseOffset) + k }))
      } catch (err) {
        values.forEach(value => emit('producer_send_error', { key: null, value, topic: a.topic, exception: String(err.name), message: String(err.message) }))
      }
    }))
    if (a.throughput > 0) await new Promise(resolve => setTimeout(resolve, 100))
  }
  await p.disconnect()
  emit('shutdown_complete')
}

const args = parseArgs(process.argv.slice(2))
const run = args.mode === 'consumer' ? consumer : producer
run(args).catch(err => { log(`fatal: ${err && err.stack ? err.stack : err}`); emit('shutdown_complete'); process.exit(1) })
