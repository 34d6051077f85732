// @platformatic/kafka 2.x declares Node >= 22.22 and, as far as Node 20 is concerned, only needs
// Promise.withResolvers (added in Node 22). Defining it here lets the tests run on Node 20 too;
// on Node 22+ this module does nothing. Import it before @platformatic/kafka.
if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function withResolvers () {
    let resolve, reject
    const promise = new this((res, rej) => { resolve = res; reject = rej })
    return { promise, resolve, reject }
  }
}
