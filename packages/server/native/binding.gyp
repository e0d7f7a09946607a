{
  "targets": [
    {
      "target_name": "fb_native",
      "sources": ["fb_native.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-std=gnu11"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
