// kafkajs over SASL_SSL / SASL_PLAINTEXT: `node security.mjs <json>` where the JSON names
// brokers, mechanism, username, password, ca (a CA file: TLS) and topic. Produces one message,
// consumes it back in a group, prints RESULT {"ok": true, ...}; a failed login prints the error.
import { readFileSync } from 'node:fs'
import { Kafka, logLevel } from 'kafkajs'

const opts = JSON.parse(process.argv[2])

// Kafka's unsecured JWS (alg none, empty signature) for OAUTHBEARER
function unsecuredJws (sub) {
  const part = obj => Buffer.from(JSON.stringify(obj)).toString('base64url')
  const now = Math.floor(Date.now() / 1000)
  return `${part({ alg: 'none' })}.${part({ sub, iat: now, exp: now + 3600 })}.`
}
const kafka = new Kafka({
  clientId: 'security',
  brokers: opts.brokers.split(','),
  logLevel: logLevel.NOTHING,
  retry: { retries: opts.retries ?? 3, initialRetryTime: 100 },
  ssl: opts.ca ? { ca: [readFileSync(opts.ca, 'utf-8')] } : false,
  sasl: opts.mechanism === 'OAUTHBEARER'
    ? { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: unsecuredJws(opts.username) }) }
    : { mechanism: opts.mechanism.toLowerCase(), username: opts.username, password: opts.password },
})

async function run () {
  const producer = kafka.producer()
  await producer.connect()
  const value = `v-${Date.now()}-${Math.random()}`
  await producer.send({ topic: opts.topic, messages: [{ value }] })
  await producer.disconnect()
  const consumer = kafka.consumer({ groupId: `g-${Date.now()}-${Math.random()}` })
  await consumer.connect()
  await consumer.subscribe({ topic: opts.topic, fromBeginning: true })
  const seen = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no message within 30 s')), 30000)
    consumer.run({ eachMessage: async ({ message }) => {
      if (message.value.toString() === value) { clearTimeout(timer); resolve(true) }
    } })
  })
  await consumer.disconnect()
  return { ok: seen }
}

const watchdog = setTimeout(() => { console.log('RESULT ' + JSON.stringify({ ok: false, error: 'watchdog' })); process.exit(1) }, 60000)
run().then(result => {
  console.log('RESULT ' + JSON.stringify(result))
  clearTimeout(watchdog)
  process.exit(0)
}, err => {
  console.log('RESULT ' + JSON.stringify({ ok: false, error: String(err && err.message), type: err && err.name }))
  clearTimeout(watchdog)
  process.exit(1)
})
