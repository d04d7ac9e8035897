package mcpredis

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// clustered reports whether c talks to a Redis Cluster (go-redis's
// cluster client, or a universal client made with several addresses).
func clustered(c redis.UniversalClient) bool {
	_, ok := c.(*redis.ClusterClient)
	return ok
}

// braces turns the braces of a prefix into parentheses, so that the hash
// tag a key begins with is the one keyPrefix made.
var braces = strings.NewReplacer("{", "(", "}", ")")

// keyPrefix returns what begins every key (and channel) of one part of
// the store on c: on one node (or a Sentinel's master) prefix itself, as
// before Redis Cluster was supported; on a cluster "{<prefix><part>}",
// a hash tag, so that every key of the part is in one slot and its
// scripts, which compute the keys they touch, run on one node (a prefix's
// braces become parentheses there). Each part's keys are thus on one
// master of the cluster (and its replicas), the parts spread over the
// masters by their tags.
func keyPrefix(c redis.UniversalClient, prefix, part string) string {
	if !clustered(c) {
		return prefix
	}
	return "{" + braces.Replace(prefix+part) + "}"
}

// shardedScript returns sc's source with its PUBLISH calls made SPUBLISH:
// on a cluster, a publish reaches only the nodes of its channel's slot
// (the part's own, see keyPrefix), not every node.
func shardedScript(src string) *redis.Script {
	return redis.NewScript(strings.ReplaceAll(src, "redis.call('PUBLISH'", "redis.call('SPUBLISH'"))
}

// newPubSub returns a Pub/Sub connection of c, not connected yet (go-redis
// connects it with its first command or read). On a cluster it is a
// sharded one (SSUBSCRIBE), bound to the node of anchor's slot, where
// every channel it will subscribe to is (they share anchor's hash tag):
// anchor is noted as subscribed without a round trip (go-redis remembers a
// channel whose subscription failed, here on a done context, and
// subscribes to it on every new connection), so that the first connection,
// whether made by a subscription or by the reader, goes to that node.
// Nothing is published to anchor.
func newPubSub(c redis.UniversalClient, anchor string) *redis.PubSub {
	if !clustered(c) {
		return c.Subscribe(context.Background())
	}
	ps := c.SSubscribe(context.Background())
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_ = ps.SSubscribe(done, anchor)
	return ps
}

// subscribe subscribes ps, made by newPubSub for c, to channels.
func subscribe(ctx context.Context, c redis.UniversalClient, ps *redis.PubSub, channels ...string) error {
	if clustered(c) {
		return ps.SSubscribe(ctx, channels...)
	}
	return ps.Subscribe(ctx, channels...)
}

// unsubscribe unsubscribes ps, made by newPubSub for c, from channels.
func unsubscribe(ctx context.Context, c redis.UniversalClient, ps *redis.PubSub, channels ...string) error {
	if clustered(c) {
		return ps.SUnsubscribe(ctx, channels...)
	}
	return ps.Unsubscribe(ctx, channels...)
}

// confirmKind is the Kind of the [redis.Subscription] that confirms a
// subscription of newPubSub's connection on c.
func confirmKind(c redis.UniversalClient) string {
	if clustered(c) {
		return "ssubscribe"
	}
	return "subscribe"
}

// publish publishes msg on channel: SPUBLISH on a cluster (to the nodes of
// the channel's slot only), PUBLISH on one node.
func publish(ctx context.Context, c redis.UniversalClient, channel string, msg any) (int64, error) {
	if clustered(c) {
		return c.SPublish(ctx, channel, msg).Result()
	}
	return c.Publish(ctx, channel, msg).Result()
}

// layoutReload is how often a cluster client reloads the cluster's layout
// while a part holds a Pub/Sub connection (see followLayout).
const layoutReload = 2 * time.Second

// followLayout has c, when it is a cluster client, reload the cluster's
// layout every layoutReload (one CLUSTER SLOTS, in the background) until
// done is closed. A sharded Pub/Sub connection whose master died
// reconnects to the master go-redis's layout names for its slot: without
// a reload it would dial the dead one until go-redis's own periodic
// reload (ClusterStateReloadInterval, a minute by default), or until a
// command of the client failed (see failed), which a client that only
// listens never sends.
func followLayout(c redis.UniversalClient, done <-chan struct{}) {
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return
	}
	go func() {
		t := time.NewTicker(layoutReload)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				cc.ReloadState(context.Background())
			}
		}
	}()
}
