package proxy

// HeadTimeout lets tests of the head-arrival limit shorten it.
var HeadTimeout = &headTimeout
