// kafka-emu's HTTP control endpoint from Node: `node control.mjs <scenario> <bootstrap>`, with the
// endpoint's base URL in $KAFKA_EMU_CONTROL (http://HOST:PORT). Plain `fetch` (Node 20), no
// client package for the control plane: what any language can do.
// Scenarios: http (the endpoint itself: document, topics, faults, errors), faults (a kafkajs
// group of two, REBALANCE_IN_PROGRESS on OffsetCommit added over HTTP: the committer rejoins),
// session (a kafkajs member in a child process is SIGKILLed; advance_to_next_deadline over HTTP
// expires exactly it and the survivor takes every partition long before session.timeout.ms),
// member (the child of `session`: joins, prints JOINED lines, waits to be killed).
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Kafka, logLevel } from 'kafkajs'
import { main, waitFor, within, sleep, controlRequest as control, controlOk as ok } from './lib.mjs'

const HEARTBEAT_MS = 500
const SESSION_MS = 45000

function kafka(bootstrap, clientId) {
  return new Kafka({ clientId, brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } })
}

async function http() {
  const out = {}
  const doc = (await control('GET', '/openapi.json')).body
  out.openapi = doc.openapi
  out.operations = Object.values(doc.paths).flatMap(item => Object.values(item).map(op => op.operationId))
  out.health = (await control('GET', '/health')).body.status
  out.created = await ok('POST', '/topics', { name: 'from-node', partitions: 2 })
  out.topics = (await ok('GET', '/topics')).map(t => [t.name, t.partitions])
  out.create_again = await control('POST', '/topics', { name: 'from-node', partitions: 2 })
  out.malformed = await control('POST', '/topics', '{"name": ')
  out.unknown_path = await control('GET', '/no/such/path')
  out.wrong_method = await control('PUT', '/topics')
  out.fault = await ok('POST', '/faults', { action: 'error', api: 'Heartbeat', error: 'REBALANCE_IN_PROGRESS', group_id: 'g' })
  out.bad_fault = await control('POST', '/faults', { action: 'error', api: 'NoSuchApi', error: 'REBALANCE_IN_PROGRESS' })
  out.faults_listed = (await ok('GET', '/faults')).map(f => f.id)
  out.removed = await control('DELETE', `/faults/${out.fault.id}`)
  out.removed_again = await control('DELETE', `/faults/${out.fault.id}`)
  return out
}

// A consumer that records its member id, generation joins and partitions, and consumes.
async function member(client, groupId, topic, got) {
  const consumer = client.consumer({ groupId, sessionTimeout: SESSION_MS, heartbeatInterval: HEARTBEAT_MS, rebalanceTimeout: 10000, maxWaitTimeInMs: 100 })
  const m = { consumer, id: null, joins: 0, partitions: [] }
  consumer.on(consumer.events.GROUP_JOIN, e => {
    m.id = e.payload.memberId
    m.joins += 1
    m.partitions = (e.payload.memberAssignment[topic] || []).slice().sort((a, b) => a - b)
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  // autoCommitThreshold 1: every processed batch commits, so the fault meets a real commit
  await consumer.run({ autoCommitThreshold: 1, eachMessage: async ({ message }) => { got.push(message.value.toString()) } })
  return m
}

const covers = (ms, n) => {
  const all = ms.flatMap(m => m.partitions)
  return ms.every(m => m.id) && all.length === n && new Set(all).size === n
}

async function faults(bootstrap) {
  const groupId = 'js-control-faults'
  const topic = 'control-topic'
  const client = kafka(bootstrap, 'control-faults')
  const got = []
  const members = [await member(client, groupId, topic, got), await member(client, groupId, topic, got)]
  await waitFor('2 members to split 4 partitions', () => covers(members, 4) && members.every(m => m.partitions.length))
  const joinsBefore = members.map(m => m.joins)
  const rule = await ok('POST', '/faults', { action: 'error', api: 'OffsetCommit', error: 'REBALANCE_IN_PROGRESS', group_id: groupId })
  const producer = client.producer()
  await producer.connect()
  await producer.send({ topic, messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) })
  await waitFor('the fault to fire', async () => (await ok('GET', '/faults')).find(f => f.id === rule.id).fired === 1)
  await waitFor('a member to rejoin', () => members.some((m, i) => m.joins > joinsBefore[i]))
  await waitFor('the group to settle again', () => covers(members, 4))
  await waitFor('every message (have ' + got.length + ')', () => new Set(got).size === 20)
  const fired = (await ok('GET', '/faults')).find(f => f.id === rule.id)
  await within('producer disconnect', producer.disconnect())
  await Promise.all(members.map(m => within('disconnect', m.consumer.disconnect())))
  return { group: groupId, rule: rule.id, fired: fired.fired, active: fired.active, joins_before: joinsBefore, joins_after: members.map(m => m.joins), consumed: new Set(got).size }
}

async function session(bootstrap) {
  const groupId = 'js-control-session'
  const topic = 'control-topic'
  const survivor = await member(kafka(bootstrap, 'survivor'), groupId, topic, [])
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'member', bootstrap], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env })
  const doomed = { id: null, partitions: [] }
  let buffered = ''
  child.stdout.on('data', chunk => {
    buffered += chunk
    let nl
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      if (line.startsWith('JOINED ')) Object.assign(doomed, JSON.parse(line.slice(7)))
    }
  })
  try {
    await waitFor('the child member to join and the 2 members to split 4 partitions',
      () => doomed.id && survivor.partitions.length && covers([survivor, doomed], 4), 30000)
    await sleep(1000) // let a late rebalance show itself before the kill
    await waitFor('a stable split', () => covers([survivor, doomed], 4))
    const killedAt = Date.now()
    child.kill('SIGKILL')
    await sleep(HEARTBEAT_MS + 300) // the survivor heartbeats again: its deadline is later now
    const happened = await ok('POST', '/time/advance-to-next-deadline', { group_id: groupId, kind: 'session' })
    await waitFor('the survivor to own every partition', () => survivor.partitions.length === 4, 30000)
    const tookMs = Date.now() - killedAt
    await within('disconnect', survivor.consumer.disconnect())
    return {
      group: groupId,
      doomed: doomed.id,
      survivor: survivor.id,
      expired: happened.members_expired.map(m => m.member_id),
      advanced_ms: happened.advanced_ms,
      took_ms: tookMs
    }
  } finally {
    child.kill('SIGKILL')
  }
}

// The child of `session`: a member that reports each join and otherwise just lives.
async function childMember(bootstrap) {
  const m = await member(kafka(bootstrap, 'doomed'), 'js-control-session', 'control-topic', [])
  m.consumer.on(m.consumer.events.GROUP_JOIN, () => {
    console.log('JOINED ' + JSON.stringify({ id: m.id, partitions: m.partitions }))
  })
  if (m.id) console.log('JOINED ' + JSON.stringify({ id: m.id, partitions: m.partitions }))
  await sleep(55000) // killed long before
  return {}
}

await main({ http, faults, session, member: childMember })
