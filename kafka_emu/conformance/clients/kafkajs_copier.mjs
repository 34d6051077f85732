// A transactional message copier on kafkajs (2.x), Kafka's TransactionalMessageCopier contract.
//
//   node kafkajs_copier.mjs --bootstrap-server HOST:PORT --input-topic IN --input-partition 0 \
//       --output-topic OUT --transactional-id copier-0 --group-id G [--max-messages N] \
//       [--transaction-size 200] [--transaction-timeout 60000] [--enable-random-aborts] \
//       [--use-group-metadata]
//
// The loop of Kafka's copier (see confluent_copier.py): read the input partition read_committed
// from the group's committed offset, copy each chunk of --transaction-size records to the same
// output partition in one transaction together with the next offset (sendOffsets), commit -- or,
// with --enable-random-aborts, abort one transaction in three and go back to the committed
// offset. Events on stdout are Kafka's JSON lines ({"progress": ...} before each chunk,
// {"shutdown_complete": ...} on the way out; remaining 0 there: the copy is done).
//
// kafkajs has no manual assignment (no assign()): the consumer joins a group of its own, one
// per life (`<group>.<transactional id>.<pid>`, so a killed life's member never delays the next),
// whose assigner gives it exactly the input partition; where to start comes from the copier's
// real group (admin fetchOffsets), sought at every join, and the offsets go to the real group
// in the transactions. kafkajs's sendOffsets takes a group id only (no group metadata), so
// --use-group-metadata changes nothing; --group-mode is refused (exit 2). SIGTERM stops after
// the transaction in progress; a fenced producer or a fatal error exits 1.
import { Kafka, logLevel, AssignerProtocol, Partitioners } from 'kafkajs'

function log (msg) { process.stderr.write(`${new Date().toISOString()} ${msg}\n`) }

function parseArgs (argv) {
  const a = { inputPartition: 0, groupId: '-1', maxMessages: -1, transactionSize: 200, transactionTimeout: 60000 }
  const valued = {
    '--bootstrap-server': v => { a.bootstrap = v },
    '--broker-list': v => { a.bootstrap = v },
    '--input-topic': v => { a.inputTopic = v },
    '--input-partition': v => { a.inputPartition = Number(v) },
    '--output-topic': v => { a.outputTopic = v },
    '--transactional-id': v => { a.transactionalId = v },
    '--group-id': v => { a.groupId = v },
    '--consumer-group': v => { a.groupId = v },
    '--max-messages': v => { a.maxMessages = Number(v) },
    '--transaction-size': v => { a.transactionSize = Number(v) },
    '--transaction-timeout': v => { a.transactionTimeout = Number(v) }
  }
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]
    if (name === '--enable-random-aborts') a.randomAborts = true
    else if (name === '--use-group-metadata') a.useGroupMetadata = true
    else if (name === '--group-mode') { log('kafkajs_copier: --group-mode is not supported'); process.exit(2) }
    else if (valued[name] && i + 1 < argv.length) valued[name](argv[++i])
    else { log(`unknown option or missing value: ${name}`); process.exit(2) }
  }
  for (const [key, flag] of [['bootstrap', '--bootstrap-server'], ['inputTopic', '--input-topic'], ['outputTopic', '--output-topic'], ['transactionalId', '--transactional-id']]) {
    if (a[key] === undefined) { log(`${flag} is required`); process.exit(2) }
  }
  return a
}

// The assigner of the copier's own group: its only member gets the one input partition.
const onePartition = (topic, partition) => () => ({
  name: 'CopierPartition',
  version: 0,
  async assign ({ members }) {
    return members.map(({ memberId }, i) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: i === 0 ? { [topic]: [partition] } : {} })
    }))
  },
  protocol ({ topics }) {
    return { name: 'CopierPartition', metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics }) }
  }
})

// Errors after which the producer cannot go on (Kafka's copier rethrows these).
const FATAL = new Set(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'OUT_OF_ORDER_SEQUENCE_NUMBER'])
const isFatal = err => FATAL.has(err && err.type) || (err && err.name === 'KafkaJSNonRetriableError' && !(err.retriable))

const state = { total: 0, consumed: 0, remaining: 0, stopping: false, inBatch: false }
const pad = n => String(n).padStart(2, '0')
function emit (head) { // Kafka's keys; its time format (yyyy/MM/dd HH:mm:ss:SSS)
  const d = new Date()
  const time = `${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}:${String(d.getUTCMilliseconds()).padStart(3, '0')}`
  process.stdout.write(JSON.stringify({ ...head, totalProcessed: state.total, consumed: state.consumed, remaining: state.remaining, time }) + '\n')
}

async function main (a) {
  state.remaining = a.maxMessages < 0 ? Number.MAX_SAFE_INTEGER : a.maxMessages
  const kafka = new Kafka({
    clientId: `kafkajs-copier-${a.transactionalId}`,
    brokers: a.bootstrap.split(','),
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, log: entry }) => log(`kafkajs ${namespace || ''} ${entry.message}${entry.error ? ` (${entry.error})` : ''}`),
    retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 2000 }
  })
  const tp = { topic: a.inputTopic, partition: a.inputPartition }

  // where the copy starts: the real group's committed offset, else the partition's start
  const committedOffset = async () => {
    const admin = kafka.admin()
    await admin.connect()
    try {
      const [committed] = (await admin.fetchOffsets({ groupId: a.groupId, topics: [a.inputTopic] }))[0].partitions
        .filter(p => p.partition === a.inputPartition).map(p => Number(p.offset))
      const bounds = (await admin.fetchTopicOffsets(a.inputTopic)).find(p => p.partition === a.inputPartition)
      return { next: committed >= 0 ? committed : Number(bounds.low), high: Number(bounds.high) }
    } finally {
      await admin.disconnect()
    }
  }
  const start = await committedOffset()
  let next = start.next
  state.remaining = Math.min(state.remaining, Math.max(0, start.high - next))

  const newProducer = () => kafka.producer({
    transactionalId: a.transactionalId, transactionTimeout: a.transactionTimeout,
    maxInFlightRequests: 1, idempotent: true, createPartitioner: Partitioners.DefaultPartitioner
  })
  let producer = newProducer()
  // kafkajs 2.2.4 neither retries a failed EndTxn nor lets the application retry or abort it:
  // its state stays COMMITTING / ABORTING and the producer can never begin again. The copier
  // then does what Kafka's copier does after a failed transaction (abort, back to the committed
  // positions) the only way kafkajs allows: a new producer, whose InitProducerId completes or
  // aborts the open transaction, and the group's committed offset read again (which tells
  // whether that transaction committed).
  const replaceProducer = async () => {
    try { await producer.disconnect() } catch (err) { log(`producer disconnect failed: ${err}`) }
    let now
    for (let attempt = 1; ; attempt++) { // a broker may be down for a while: as a restart would
      try {
        producer = newProducer()
        await producer.connect()
        now = (await committedOffset()).next
        break
      } catch (err) {
        if (isFatal(err) || attempt >= 60) throw err
        log(`a new producer failed (${err}); again in 1 s`)
        try { await producer.disconnect() } catch (_) {}
        await new Promise(resolve => setTimeout(resolve, 1000))
      }
    }
    if (now > next) { // the failed commit did commit
      state.remaining -= now - next
      state.consumed += now - next
      state.total += now - next
    }
    next = now
  }
  const consumer = kafka.consumer({
    groupId: `${a.groupId}.${a.transactionalId}.${process.pid}`,
    partitionAssigners: [onePartition(a.inputTopic, a.inputPartition)],
    sessionTimeout: 10000, heartbeatInterval: 3000, rebalanceTimeout: 60000, maxWaitTimeInMs: 200,
    readUncommitted: false, maxBytesPerPartition: 256 * 1024
  })

  let exiting = false
  const shutdown = async (code) => {
    if (exiting) return
    exiting = true
    try { await consumer.disconnect() } catch (err) { log(`consumer disconnect failed: ${err}`) }
    try { await producer.disconnect() } catch (err) { log(`producer disconnect failed: ${err}`) }
    emit({ shutdown_complete: a.transactionalId })
    process.exit(code)
  }
  process.on('SIGTERM', () => { state.stopping = true; if (!state.inBatch) shutdown(0) })
  consumer.on(consumer.events.GROUP_JOIN, () => consumer.seek({ ...tp, offset: String(next) }))
  consumer.on(consumer.events.CRASH, e => {
    log(`consumer crashed: ${e.payload.error}${e.payload.restart ? ' (kafkajs restarts it)' : ''}`)
    if (!e.payload.restart) shutdown(1)
  })

  emit({ progress: a.transactionalId, stage: 'ProcessLoop' })
  if (state.remaining <= 0) return shutdown(0)
  await producer.connect() // InitProducerId: fences the previous life, aborts its transaction
  await consumer.connect()
  await consumer.subscribe({ topics: [a.inputTopic], fromBeginning: true })

  // one transaction: the records, then the next offset to the real group; true when committed
  const copy = async (messages) => {
    const txn = await producer.transaction()
    try {
      await txn.send({ topic: a.outputTopic, messages: messages.map(m => ({ key: m.key, value: m.value, partition: a.inputPartition })) })
      const offset = Number(messages[messages.length - 1].offset) + 1
      await txn.sendOffsets({ consumerGroupId: a.groupId, topics: [{ topic: a.inputTopic, partitions: [{ partition: a.inputPartition, offset: String(offset) }] }] })
      if (a.randomAborts && Math.floor(Math.random() * 3) === 0) {
        await txn.abort()
        return false
      }
      await txn.commit()
      next = offset
      return true
    } catch (err) {
      if (isFatal(err)) throw err
      log(`transaction failed, aborting and going back to the committed offset: ${err}`)
      try {
        if (!txn.isActive()) throw new Error('kafkajs cannot end this transaction any more')
        await txn.abort()
      } catch (abortErr) {
        if (isFatal(abortErr)) throw abortErr
        log(`abort failed (${abortErr}): a new producer ends the transaction`)
        await replaceProducer()
      }
      return false
    }
  }

  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      state.inBatch = true
      try {
        const messages = batch.messages.filter(m => Number(m.offset) >= next)
        for (let i = 0; i < messages.length && state.remaining > 0; i += a.transactionSize) {
          if (state.stopping || !isRunning() || isStale()) return
          const chunk = messages.slice(i, i + Math.min(a.transactionSize, state.remaining))
          if (!(await copy(chunk))) {
            consumer.seek({ ...tp, offset: String(next) }) // back to the committed offset
            return
          }
          resolveOffset(chunk[chunk.length - 1].offset)
          state.remaining -= chunk.length
          state.consumed += chunk.length
          state.total += chunk.length
          emit({ progress: a.transactionalId, stage: 'ProcessLoop' })
          // the copier's own group's coordinator may be down: kafkajs's runner rejoins later
          try { await heartbeat() } catch (err) { log(`heartbeat failed: ${err}`) }
        }
      } catch (err) {
        log(`fatal: ${err && err.stack ? err.stack : err}`)
        setImmediate(() => shutdown(1))
      } finally {
        state.inBatch = false
        if (!exiting && (state.stopping || state.remaining <= 0)) setImmediate(() => shutdown(0))
      }
    }
  })
}

const args = parseArgs(process.argv.slice(2))
main(args).catch(err => {
  log(`fatal: ${err && err.stack ? err.stack : err}`)
  emit({ shutdown_complete: args.transactionalId })
  process.exit(1)
})
