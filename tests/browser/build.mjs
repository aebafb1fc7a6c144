// Bundles src/app.tsx (and the packages it imports) into dist/app.js, next to dist/index.html.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

mkdirSync("dist", { recursive: true });
await build({
  entryPoints: ["src/app.tsx"],
  outfile: "dist/app.js",
  bundle: true,
  platform: "browser",
  format: "iife",
  target: "es2020",
  jsx: "automatic",
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "warning",
});
copyFileSync("src/index.html", "dist/index.html");
