// Preloaded (node --require) into the conformance CLI. Its scenario servers call `listen(0)`
// with no host, which binds every interface, and read `address().port` right after, so the
// bind must stay synchronous (passing a host to listen() would make it wait for a lookup).
// Node binds a host-less listen through `Server.prototype._listen2` (its legacy alias of
// setupListenHandle) with no address; give it the loopback address there instead.
"use strict";
const net = require("node:net");

const listen2 = net.Server.prototype._listen2;
if (typeof listen2 !== "function") throw new Error("loopback.cjs: this Node has no Server._listen2");
net.Server.prototype._listen2 = function (address, port, addressType, backlog, fd, flags) {
  if (!address && typeof fd !== "number") {
    address = "127.0.0.1";
    addressType = 4;
  }
  return listen2.call(this, address, port, addressType, backlog, fd, flags);
};
