import { type MiddlewareConsumer, Module, type NestModule, RequestMethod } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import { ClosedRunsReconciler } from './closed-runs';
import { DatabaseCheck, StartDatabaseCheck } from './database-check';
import { RunStreamService } from './run-stream.service';
import { RunsController } from './runs.controller';
import { RunsService } from './runs.service';
import { TransitionBus } from './transition-bus.service';

@Module({
  imports: [AuthModule, CatalogModule],
  controllers: [RunsController],
  providers: [RunsService, RunStreamService, TransitionBus, DatabaseCheck, StartDatabaseCheck, ClosedRunsReconciler],
  exports: [RunsService],
})
export class RunsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(StartDatabaseCheck).forRoutes({ path: 'workflows/start', method: RequestMethod.POST });
  }
}
