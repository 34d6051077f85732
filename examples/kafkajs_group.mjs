// A kafkajs consumer group against kafka-emu (or any Kafka broker).
//
//   npm install kafkajs@2.2.4
//   kafka-emu serve &              # or: make run
//   node kafkajs_group.mjs [bootstrap, default 127.0.0.1:9092]
//
// Produces a few keyed messages, consumes them as a member of group "example-group", prints each
// one and exits 0 once all have arrived (1 if they do not arrive within 20 seconds).
import { Kafka, logLevel } from 'kafkajs'

const bootstrap = process.argv[2] || '127.0.0.1:9092'
const topic = `example-${Date.now()}`
const kafka = new Kafka({ clientId: 'example', brokers: [bootstrap], logLevel: logLevel.ERROR })

const admin = kafka.admin()
await admin.connect()
await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] })
await admin.disconnect()

const messages = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'].map((word, i) => ({ key: `k${i}`, value: word }))
const producer = kafka.producer()
await producer.connect()
await producer.send({ topic, messages })
await producer.disconnect()

// sessionTimeout 6000 is the broker's default minimum; short timeouts keep the example quick.
const consumer = kafka.consumer({ groupId: 'example-group', sessionTimeout: 6000, heartbeatInterval: 500 })
await consumer.connect()
await consumer.subscribe({ topics: [topic], fromBeginning: true })

let received = 0
const done = new Promise(resolve => {
  consumer.run({
    eachMessage: async ({ partition, message }) => {
      console.log(`partition ${partition} offset ${message.offset}: ${message.key} = ${message.value}`)
      if (++received === messages.length) resolve()
    }
  })
})
const timeout = setTimeout(() => { console.error(`only ${received}/${messages.length} messages arrived`); process.exit(1) }, 20000)
await done
clearTimeout(timeout)
await consumer.disconnect()
console.log(`consumed ${received} messages`)
