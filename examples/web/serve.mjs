// serve.mjs - the demo's static file server: node, no dependencies, 127.0.0.1 only.
//   node examples/web/serve.mjs [--port N] ROOT [/PREFIX=DIR ...]
// serves ROOT at / and each DIR under /PREFIX/ (the demo: examples/web at /, the models built
// by kgen under /models/). Port 0 picks a free port. Prints "serving http://127.0.0.1:PORT/"
// once listening (the browser test reads that line), then logs nothing but errors.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";

const types = {
    ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript",
    ".css": "text/css", ".json": "application/json", ".wasm": "application/wasm", ".png": "image/png",
    ".svg": "image/svg+xml", ".bin": "application/octet-stream", ".npy": "application/octet-stream",
};

let port = 8080;
const mounts = [];     // [url prefix, directory], longest prefix first
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--port")
        port = Number(args[++i]);
    else if (a.startsWith("/") && a.includes("="))
        mounts.push([a.slice(0, a.indexOf("=")).replace(/\/*$/, "/"), path.resolve(a.slice(a.indexOf("=") + 1))]);
    else
        mounts.push(["/", path.resolve(a)]);
}
if (!mounts.length || !Number.isInteger(port) || port < 0) {
    console.error("usage: node serve.mjs [--port N] ROOT [/PREFIX=DIR ...]");
    process.exit(2);
}
mounts.sort((a, b) => b[0].length - a[0].length);

// the file for a URL path, or null: never a path outside its mount
function resolve(urlPath) {
    let p;
    try {
        p = decodeURIComponent(urlPath);
    } catch {
        return null;
    }
    if (p.includes("\0"))
        return null;
    if (p.endsWith("/"))
        p += "index.html";
    for (const [prefix, dir] of mounts) {
        if (!p.startsWith(prefix))
            continue;
        const f = path.resolve(dir, "." + path.posix.normalize("/" + p.slice(prefix.length)));
        return f === dir || f.startsWith(dir + path.sep) ? f : null;
    }
    return null;
}

const server = http.createServer((req, res) => {
    const f = req.method === "GET" || req.method === "HEAD" ? resolve(new URL(req.url, "http://x").pathname) : null;
    const fail = (code) => {
        res.writeHead(code, { "Content-Type": "text/plain" });
        res.end(`${code}\n`);
    };
    if (!f)
        return fail(req.method === "GET" || req.method === "HEAD" ? 404 : 405);
    fs.readFile(f, (err, data) => {
        if (err)
            return fail(404);
        res.writeHead(200, {
            "Content-Type": types[path.extname(f)] ?? "application/octet-stream",
            "Content-Length": data.length, "Cache-Control": "no-store",
        });
        res.end(req.method === "HEAD" ? undefined : data);
    });
});
server.on("error", (e) => {
    console.error(`serve.mjs: ${e.message}`);
    process.exit(1);
});
server.listen(port, "127.0.0.1", () => {
    console.log(`serving http://127.0.0.1:${server.address().port}/`);
    for (const [prefix, dir] of mounts)
        console.log(`  ${prefix} -> ${dir}`);
});
