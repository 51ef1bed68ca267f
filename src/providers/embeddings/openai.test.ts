import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fakeEmbedding, type FakeEmbeddingsServer, startFakeEmbeddingsServer } from '../../../test/fakes/openai/embeddings.ts';
import { createOpenAiEmbeddings } from './openai.ts';

describe('OpenAI-compatible embeddings (openai SDK against a local fake server)', () => {
  let server: FakeEmbeddingsServer;
  before(async () => {
    server = await startFakeEmbeddingsServer();
  });
  after(() => server.close());

  it('embeds in input order, in batches, with the model and key', async () => {
    const provider = createOpenAiEmbeddings({ baseUrl: server.baseUrl, apiKey: 'sk-local', model: 'embed-small', batchSize: 2 });
    const texts = ['red apples', 'green pears', 'yellow bananas', 'blue berries', 'red cherries'];
    const vectors = await provider.embed(texts);
    assert.equal(provider.model, 'embed-small');
    assert.equal(vectors.length, texts.length);
    for (const [i, vector] of vectors.entries()) {
      const expected = fakeEmbedding(texts[i]);
      assert.equal(vector.length, expected.length);
      for (const [j, v] of vector.entries()) assert.ok(Math.abs(v - expected[j]) < 1e-9);
    }
    const batches = server.requests.slice(-3);
    assert.deepEqual(batches.map((r) => r.input.length), [2, 2, 1]);
    assert.ok(batches.every((r) => r.model === 'embed-small' && r.authorization === 'Bearer sk-local'));
  });

  it('similar texts are closer than unrelated ones (the fake server is a hashed bag of words)', () => {
    const cos = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * b[i], 0);
    const a = fakeEmbedding('reset the password of my account');
    assert.ok(cos(a, fakeEmbedding('how do I reset my password')) > cos(a, fakeEmbedding('the ferry leaves at seven')));
  });

  it('retries a transient failure and surfaces a persistent one', async () => {
    const provider = createOpenAiEmbeddings({ baseUrl: server.baseUrl, model: 'embed-small' });
    server.failNext(1);
    assert.equal((await provider.embed(['retry me'])).length, 1);
    server.failNext(10);
    await assert.rejects(provider.embed(['fail me']));
    server.failNext(0);
  });
});
