// Package gosdk156 drives a real hookd API with the official Svix Go SDK v1.56.0, the last whose
// generated models reject a field they do not know and require their own: it proves that hookd
// gives that SDK exactly the 1.44 shapes, telling it apart by its User-Agent. It is a module of
// its own so that the main module can keep requiring the SDK v1.44.0.
package gosdk156
