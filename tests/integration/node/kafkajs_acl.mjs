// kafkajs 2.2.4 against kafka-emu's ACLs: `node kafkajs_acl.mjs <scenario> [bootstrap]`.
// Scenarios (the emulator runs StandardAuthorizer with ACLs naming somebody else, so the plaintext
// principal User:ANONYMOUS is refused): group (a consumer refused its group, FindCoordinator
// included), describable (refused READ on a group it may describe: JoinGroup refused), produce
// (a producer refused its topic). Each reports the error kafkajs surfaced. See lib.mjs for the contract.
import { Kafka, logLevel } from 'kafkajs'
import { main, within } from './lib.mjs'

function kafka(bootstrap) {
  return new Kafka({ clientId: 'kafka-emu-acl', brokers: [bootstrap], logLevel: logLevel.NOTHING,
                     retry: { retries: 0, initialRetryTime: 100 } })
}

async function group(bootstrap, groupId = 'acl-group') {
  const consumer = kafka(bootstrap).consumer({ groupId, retry: { retries: 0 } })
  await consumer.connect()
  let error = null
  try {
    await consumer.subscribe({ topic: 'acl-topic', fromBeginning: true })
    const crashed = new Promise(resolve => consumer.on(consumer.events.CRASH, e => resolve(e.payload.error)))
    await consumer.run({ eachMessage: async () => {} })
    error = await within('the consumer to crash', crashed, 30000)
  } catch (e) {
    error = e
  } finally {
    await within('disconnect', consumer.disconnect()).catch(() => {})
  }
  return describe(error)
}

async function produce(bootstrap) {
  const producer = kafka(bootstrap).producer({ retry: { retries: 0 } })
  await producer.connect()
  let error = null
  try {
    await producer.send({ topic: 'acl-topic', messages: [{ value: 'v' }] })
  } catch (e) {
    error = e
  } finally {
    await within('disconnect', producer.disconnect()).catch(() => {})
  }
  return describe(error)
}

// kafkajs wraps a protocol error when it gives up retrying: report the innermost one's type
function describe(error) {
  let inner = error
  while (inner && !inner.type && (inner.originalError || inner.cause)) inner = inner.originalError || inner.cause
  return { type: (inner && inner.type) || null, name: (error && error.name) || null,
           message: (error && error.message) || null }
}

await main({ group, describable: bootstrap => group(bootstrap, 'acl-group-described'), produce })
