// GraphiQL 5, bundled by the server (server/assets.ts) so it needs no network: the fetcher posts
// to this server, and Monaco's editor workers are served from /assets like the page itself.
import { GraphiQL, type GraphiQLProps } from 'graphiql';
import { createRoot } from 'react-dom/client';
import 'graphiql/style.css';
import { DEFAULT_QUERY, DEFAULT_VARIABLES } from './default-query.js';

// Monaco asks for a worker per language; each is its own bundle (see server/assets.ts).
(globalThis as { MonacoEnvironment?: unknown }).MonacoEnvironment = {
  getWorker(_workerId: string, label: string) {
    const name = label === 'json' ? 'json' : label === 'graphql' ? 'graphql' : 'editor';
    return new Worker(`/assets/${name}.worker.js`);
  },
};

const fetcher: GraphiQLProps['fetcher'] = async (params) => {
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(params),
  });
  return response.json();
};

createRoot(document.getElementById('graphiql')!).render(
  <GraphiQL
    fetcher={fetcher}
    defaultQuery={DEFAULT_QUERY}
    initialQuery={DEFAULT_QUERY}
    initialVariables={JSON.stringify(DEFAULT_VARIABLES, null, 2)}
    defaultEditorToolsVisibility="variables"
  />,
);
