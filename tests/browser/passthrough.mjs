// Agent Chat UI's `/api` passthrough (the npm package `langgraph-nextjs-api-passthrough` 0.1.4,
// `handleRequest`), as a plain Node server: the same request goes to the LangGraph server.
//
// Like the package: the path after `/api/` goes to `<apiUrl>/<path>` with the query string; of the
// browser's headers only `x-*` ones and `Authorization` go on, with `x-api-key` set to the key; a
// POST/PUT/PATCH body is read as text and sent as a string, so `fetch` labels it
// `text/plain;charset=UTF-8` (the browser's `Content-Type` is not passed on); the answer comes
// back with its status and headers and CORS headers that let any origin in; OPTIONS is a 204
// with those CORS headers. (Unlike it: the headers Node's server sets itself, `content-length`,
// `content-encoding` and `transfer-encoding`, are not copied, as `fetch` already decoded the body.)
//
// Usage: node passthrough.mjs <apiUrl> [apiKey]; prints `listening <port>` once it serves on
// 127.0.0.1.
import http from "node:http";
import { Readable } from "node:stream";

const [apiUrl, apiKey = ""] = process.argv.slice(2);
const CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
  "Access-Control-Allow-Headers": "*",
  "Access-Control-Expose-Headers": "content-location",
};
const OWN = new Set(["content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"]);

const server = http.createServer(async (req, res) => {
  try {
    if (req.method === "OPTIONS") {
      res.writeHead(204, CORS).end();
      return;
    }
    const url = new URL(req.url, "http://passthrough");
    const path = url.pathname.replace(/^\/?api\//, "");
    url.searchParams.delete("_path");
    url.searchParams.delete("nxtP_path");
    const query = url.searchParams.toString() ? `?${url.searchParams.toString()}` : "";
    const headers = {};
    for (const [key, value] of Object.entries(req.headers)) {
      if (key.toLowerCase().startsWith("x-") || key.toLowerCase() === "authorization") headers[key] = value;
    }
    const options = { method: req.method, headers: { ...headers, "x-api-key": apiKey } };
    if (["POST", "PUT", "PATCH"].includes(req.method)) {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      options.body = Buffer.concat(chunks).toString("utf8"); // `await req.text()`
    }
    const answer = await fetch(`${apiUrl}/${path}${query}`, options);
    const out = {};
    answer.headers.forEach((value, key) => {
      if (!OWN.has(key)) out[key] = value;
    });
    res.writeHead(answer.status, answer.statusText, { ...out, ...CORS });
    if (answer.body) Readable.fromWeb(answer.body).pipe(res);
    else res.end();
  } catch (error) {
    res.writeHead(error.status ?? 500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: error.message }));
  }
});
server.listen(0, "127.0.0.1", () => console.log(`listening ${server.address().port}`));
