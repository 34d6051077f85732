/* kafka-emu's docs: a Web Worker stand-in for pages opened from disk (file://).
 *
 * Material's search runs in a Web Worker, and browsers refuse `new Worker(url)` on a file:// page.
 * Material's offline plugin would load a shim for this from a CDN, which a site read offline cannot
 * reach; mkdocs.yml lists this file as the polyfill instead. Only on file:// pages, `Worker` becomes
 * a hidden same-origin iframe that runs the worker's script: messages to the worker are dispatched
 * as `message` events on the iframe's window (where the script listens), and the script's
 * `postMessage` calls come back as `message` events on the stand-in. Messages sent before the
 * script has loaded wait in a queue. Served over http(s), nothing changes.
 */
(function () {
  "use strict";
  if (location.protocol !== "file:" || typeof document === "undefined") return;

  class FileWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.onerror = null;
      this._queue = [];
      this._ready = false;
      const frame = document.createElement("iframe");
      frame.hidden = true;
      frame.setAttribute("aria-hidden", "true");
      (document.body || document.documentElement).appendChild(frame);
      this._frame = frame;
      const scope = frame.contentWindow;
      scope.postMessage = (data) => this._deliver(data);
      scope.importScripts = () => { throw new Error("importScripts is not available offline"); };
      const script = scope.document.createElement("script");
      script.src = new URL(url, location.href).href;
      script.onload = () => {
        this._ready = true;
        for (const data of this._queue.splice(0)) this._send(data);
      };
      script.onerror = () => {
        const event = new ErrorEvent("error", { message: "cannot load " + script.src });
        if (this.onerror) this.onerror(event);
        this.dispatchEvent(event);
      };
      scope.document.head.appendChild(script);
    }

    _deliver(data) {
      const event = new MessageEvent("message", { data });
      if (this.onmessage) this.onmessage(event);
      this.dispatchEvent(event);
    }

    _send(data) {
      const scope = this._frame.contentWindow;
      scope.dispatchEvent(new scope.MessageEvent("message", { data }));
    }

    postMessage(data) {
      if (this._ready) this._send(data);
      else this._queue.push(data);
    }

    terminate() {
      this._frame.remove();
    }
  }

  window.Worker = FileWorker;
})();
