import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const backend = 'http://127.0.0.1:8080';

export default defineConfig({
  plugins: [react()],
  // Relative asset URLs: the server rewrites "./" in index.html to <BaseURL>/static/, and lazy
  // chunks resolve against the entry script, so one build works under any base URL.
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    rolldownOptions: {
      output: {
        entryFileNames: 'assets/[name]-[hash].js',
        chunkFileNames: 'assets/[name]-[hash].js',
        assetFileNames: 'assets/[name]-[hash][extname]',
      },
    },
  },
  server: {
    proxy: {
      '/api': { target: backend, ws: true },
      '/health': backend,
      '/static/img': backend,
    },
  },
});
