#!/usr/bin/env node
// The CLI, built into dist/ (this file exists before the build, so package managers can link it).
import '../dist/cli.js'
